import Bus
import EventLog

/// The events one intent caused, found in one pass over the log in order.
public struct CorrelationChain {
    public let intent: EventID
    /// The positions in the chain so far, with their depth under the intent.
    private var depths: [UInt64: Int] = [:]

    public init(_ intent: EventID) {
        self.intent = intent
    }

    /// The event's depth in the chain (0 for the intent or a root), or nil if it is not in it.
    ///
    /// An event is in the chain if it is the intent, carries its correlation, or was caused by
    /// an event in the chain (which catches a producer that forgot the correlation).
    public mutating func depth(of event: StoredEvent) -> Int? {
        let parent = event.causation == 0 ? nil : depths[event.causation]
        guard event.id == intent || event.correlation == intent || parent != nil else { return nil }
        let depth = parent.map { $0 + 1 } ?? 0
        depths[event.position] = depth
        return depth
    }
}
