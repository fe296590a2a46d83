import Foundation
import Guards

/// Which day of the history is "today": a start date advanced at a pace of days per second
/// of wall time, wrapping round to the start after the last fixing, so rates keep moving.
public struct HistoryClock: Sendable {
    public let start: Date
    public let daysPerSecond: Double
    public let first: Date
    public let last: Date
    private let origin: ContinuousClock.Instant

    public init(startDate: String, daysPerSecond: Double, firstDate: String, lastDate: String) throws(HistoryClockError)
    {
        guard let start = HistoryClock.date(startDate) else { throw .badDate(startDate) }
        guard let first = HistoryClock.date(firstDate), let last = HistoryClock.date(lastDate) else {
            throw .badDate(firstDate)
        }
        guard start >= first, start <= last else { throw .outOfRange(startDate, firstDate, lastDate) }
        guard daysPerSecond >= 0, daysPerSecond.isFinite else { throw .badPace(daysPerSecond) }
        self.start = start
        self.daysPerSecond = daysPerSecond
        self.first = first
        self.last = last
        origin = .now
    }

    /// Today's date in the history, "YYYY-MM-DD".
    public var today: String {
        let seconds = (ContinuousClock.now - origin).inSeconds
        let span = last.timeIntervalSince(first) + 86_400
        var offset = start.timeIntervalSince(first) + seconds * daysPerSecond * 86_400
        offset = offset.truncatingRemainder(dividingBy: span)
        return HistoryClock.text(first.addingTimeInterval(offset))
    }

    /// Midnight UTC of the day `text` names, if it is a real calendar day.
    static func date(_ text: String) -> Date? {
        guard let day = CalendarDate(text) else { return nil }
        var components = DateComponents()
        components.year = day.year
        components.month = day.month
        components.day = day.day
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        return calendar.date(from: components)
    }

    static func text(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }
}
