import Foundation

/// A line over ``LineReader``'s limit.
public struct LineTooLong: Error, CustomStringConvertible {
    public let line: Int
    public let limit: Int
    public var description: String { "line \(line) is longer than \(limit) bytes" }
}
