import Bus
import EventLog

/// An event a test published, committed: what `expect` looks for the consequences of.
public struct Stimulus: Sendable, Equatable, CustomStringConvertible {
    public let id: EventID
    public let type: String
    public let position: UInt64
    /// What the test sent, for messages: a command URL or the event's type.
    public let label: String

    public var description: String { "\(label) (position \(position))" }
}
