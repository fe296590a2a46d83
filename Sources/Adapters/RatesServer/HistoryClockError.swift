import Foundation
import Guards

public enum HistoryClockError: Error, CustomStringConvertible {
    case badDate(String)
    case outOfRange(String, String, String)
    case badPace(Double)

    public var description: String {
        switch self {
        case .badDate(let text): "'\(text)' is not a date in the form YYYY-MM-DD"
        case .outOfRange(let date, let first, let last): "\(date) is outside the history (\(first) to \(last))"
        case .badPace(let pace): "the pace \(pace) is not a non-negative number of days per second"
        }
    }
}
