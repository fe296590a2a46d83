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
    /// Ids claimed for positions not appended yet, in order: in the table already, and put in
    /// the ring when the append of those positions comes.
    private var claimed: [(id: EventID, position: UInt64)] = []

    /// How many ids the table holds before it first grows.
    public static let initialTableCapacity = 4096

    public init(capacity: Int) {
        self.capacity = max(1, capacity)
        ring = []
        // The ring is reserved whole: memory the system maps but nobody has written costs
        // nothing. The table starts small and doubles as ids come: made whole, its 6 MiB were
        // written on every log opened (7% of the test suite's CPU went to those page faults),
        // for logs that mostly hold far fewer events. It grows five times on the way to the
        // default window, rehashing at most 65,536 entries once, and never again once full.
        ring.reserveCapacity(self.capacity)
        positions = EventPositionTable(minimumCapacity: min(self.capacity, Self.initialTableCapacity))
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
        cancelClaims()
        warm(for: records.lazy.map(\.id))
        for record in records {
            insert(record.id, at: record.position)
        }
    }

    /// Remembers the id of every record of a batch, as ``insert(_:)-([LogRecord])`` does; ids
    /// that ``claim(_:from:)`` claimed for exactly these records are in the table already, and
    /// only take their places in the ring.
    public mutating func insert(_ entries: [RecordBatch.Entry]) {
        let claimedThese =
            claimed.count == entries.count
            && zip(claimed, entries).allSatisfy { $0.id == $1.id && $0.position == $1.position }
        guard claimedThese else {
            cancelClaims()
            warm(for: entries.lazy.map(\.id))
            for entry in entries {
                insert(entry.id, at: entry.position)
            }
            return
        }
        warm(forgetting: claimed.count)
        for entry in claimed {
            if ring.count < capacity {
                ring.append(entry)
            } else {
                let oldest = ring[next]
                positions.remove(oldest.id, ifAt: oldest.position)
                ring[next] = entry
                next = (next + 1) % capacity
            }
        }
        claimed.removeAll(keepingCapacity: true)
    }

    /// ``EventLog/claimPositions(_:from:)``: the new ids go into the table as they are looked
    /// up, so that remembering them when they are appended visits no slot again. A claim
    /// replaces the claims not appended.
    public mutating func claim(_ ids: [EventID], from first: UInt64) -> [UInt64?] {
        cancelClaims()
        guard positions.count + ids.count <= positions.capacity else {
            // Claims that would grow the table (a batch larger than it has room for beside the
            // window) are not stored: the append inserts the ids as it always could.
            return EventPositionTable.claims(ids, known: positions.positions(of: ids), from: first)
        }
        let found = positions.claim(ids, from: first)
        var next = first
        for (id, position) in zip(ids, found) where position == nil {
            claimed.append((id, next))
            next += 1
        }
        return found
    }

    /// Forgets the claims not appended (an append refused, or a batch sequenced again).
    public mutating func cancelClaims() {
        guard !claimed.isEmpty else { return }
        for entry in claimed {
            positions.remove(entry.id, ifAt: entry.position)
        }
        claimed.removeAll(keepingCapacity: true)
    }

    /// Loads together, so that their cache misses overlap, the slots that inserting `ids`
    /// touches: those of the ids about to be forgotten and those the new ids go to.
    private mutating func warm(for ids: some Collection<EventID>) {
        warm(forgetting: ids.count)
        positions.warm(ids)
    }

    /// Loads together the slots of the ids that the next `count` insertions forget.
    private mutating func warm(forgetting count: Int) {
        guard ring.count == capacity else { return }
        let evicted = min(count, capacity)
        let end = next + evicted
        positions.warm(ring[next..<min(end, capacity)].lazy.map(\.id))
        if end > capacity { positions.warm(ring[0..<(end - capacity)].lazy.map(\.id)) }
    }

    public var count: Int { positions.count }
}
