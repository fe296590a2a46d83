import Bus
import EventLog

/// An input as a reducer sees it: the envelope's fields and the decoded payload.
public struct Envelope<Payload: Sendable>: Sendable {
    public let position: UInt64
    public let id: EventID
    /// The reducer's only clock.
    public let commitTime: CommitTime
    public let correlation: EventID
    public let payload: Payload

    public init(position: UInt64, id: EventID, commitTime: CommitTime, correlation: EventID, payload: Payload) {
        self.position = position
        self.id = id
        self.commitTime = commitTime
        self.correlation = correlation
        self.payload = payload
    }

    /// The envelope of a committed event with `payload` decoded from it.
    public init(_ event: StoredEvent, payload: Payload) {
        self.init(
            position: event.position, id: event.id, commitTime: event.commitTime,
            correlation: event.correlation == .zero ? event.id : event.correlation, payload: payload)
    }
}
