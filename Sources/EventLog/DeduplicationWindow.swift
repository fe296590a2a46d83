/// The ids of the most recent events and their positions, forgetting the oldest beyond a capacity.
///
/// This is what makes a retried append idempotent: the bus recognises a retry whose original
/// is among the last `capacity` events (like NATS JetStream's duplicate window).
public struct DeduplicationWindow: Sendable {
    public let capacity: Int
    private var positions: EventPositionTable
    /// The ids in the order they came, with the position each came at.
    private var ring: [(id: EventID, position: UInt64)]
    private var next = 0

    public init(capacity: Int) {
        self.capacity = max(1, capacity)
        ring = []
        // Reserved whole: growing a table of this size rehashes everything in it.
        ring.reserveCapacity(self.capacity)
        positions = EventPositionTable(minimumCapacity: self.capacity)
    }

    public func position(of id: EventID) -> UInt64? {
        positions[id]
    }

    /// The position of each of `ids`, looked up together (see ``EventPositionTable/positions(of:)``).
    public func positions(of ids: [EventID]) -> [UInt64?] {
        positions.positions(of: ids)
    }

    public mutating func insert(_ id: EventID, at position: UInt64) {
        if ring.count < capacity {
            ring.append((id, position))
        } else {
            let oldest = ring[next]
            // The same id may have come again since (a log written with a smaller window):
            // then it is the newer one the table holds, and it stays.
            positions.remove(oldest.id, ifAt: oldest.position)
            ring[next] = (id, position)
            next = (next + 1) % capacity
        }
        positions.set(id, to: position)
    }

    /// Remembers every record's id, in one call so that a batch costs one access to the window.
    public mutating func insert(_ records: [LogRecord]) {
        warm(for: records.lazy.map(\.id))
        for record in records {
            insert(record.id, at: record.position)
        }
    }

    /// Remembers the id of every record of a batch, as ``insert(_:)-([LogRecord])`` does.
    public mutating func insert(_ entries: [RecordBatch.Entry]) {
        warm(for: entries.lazy.map(\.id))
        for entry in entries {
            insert(entry.id, at: entry.position)
        }
    }

    /// Loads together, so that their cache misses overlap, the slots that inserting `ids`
    /// touches: those of the ids about to be forgotten and those the new ids go to.
    private mutating func warm(for ids: some Collection<EventID>) {
        if ring.count == capacity {
            let evicted = min(ids.count, capacity)
            let end = next + evicted
            positions.warm(ring[next..<min(end, capacity)].lazy.map(\.id))
            if end > capacity { positions.warm(ring[0..<(end - capacity)].lazy.map(\.id)) }
        }
        positions.warm(ids)
    }

    public var count: Int { positions.count }
}
