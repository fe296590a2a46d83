#if canImport(Glibc)
    import Glibc
#endif

/// A hash table from event ids to log positions: what the bus consults for every event it receives.
///
/// Open addressing with linear probing, kept at most half full, and removal that shifts the
/// entries after a hole back instead of leaving tombstones, so a table that churns forever
/// (the deduplication window) never slows down. Positions are never 0, so 0 marks a free slot.
///
/// Why not `Dictionary`: the bus does two or three lookups per event, and SipHash over a
/// 16-byte key was a tenth of the ingress thread's time. Ids come from producers, so they are
/// mixed with a key drawn once per process (a 128-bit multiply, as wyhash does) rather than
/// used as they are: a producer cannot aim ids at one run of slots without knowing the key.
public struct EventPositionTable: Sendable {
    private struct Slot {
        var id: EventID
        var position: UInt64
    }

    private var slots: [Slot]
    private var mask: Int
    private var shift: UInt64
    private let key: (UInt64, UInt64)
    /// What ``warm(_:)`` loaded, folded together; read by nobody.
    private var warmth: UInt64 = 0
    public private(set) var count = 0

    /// A table that holds `minimumCapacity` entries without growing.
    public init(minimumCapacity: Int) {
        var size = 16
        // Clamped so that doubling cannot overflow; memory runs out long before.
        while size < 2 * min(max(1, minimumCapacity), 1 << 40) { size <<= 1 }
        slots = Self.freeSlots(count: size)
        mask = size - 1
        shift = UInt64(64 - size.trailingZeroBitCount)
        key = Self.processKey
    }

    /// The position stored for `id`, if any.
    public subscript(id: EventID) -> UInt64? {
        slots.withUnsafeBufferPointer { slots in
            let home = home(of: id)
            return probe(slots, for: id, from: home, loaded: slots[home])
        }
    }

    /// Walks the probe run of `id` from `slot`, whose entry is already `loaded`.
    private func probe(
        _ slots: UnsafeBufferPointer<Slot>, for id: EventID, from slot: Int, loaded: Slot
    ) -> UInt64? {
        var (slot, entry) = (slot, loaded)
        while true {
            if entry.position == 0 { return nil }
            if entry.id == id { return entry.position }
            slot = (slot + 1) & mask
            entry = slots[slot]
        }
    }

    /// The position stored for each of `ids`, in order: what ``subscript(_:)`` answers for each.
    ///
    /// Faster than one lookup after another in a table larger than the processor's caches: a
    /// first pass loads every id's home slot, and as those loads do not depend on one another
    /// the processor overlaps their cache misses; the second pass starts from the loaded slots.
    public func positions(of ids: [EventID]) -> [UInt64?] {
        slots.withUnsafeBufferPointer { slots in
            var homes: [(slot: Int, entry: Slot)] = []
            homes.reserveCapacity(ids.count)
            for id in ids {
                let slot = home(of: id)
                homes.append((slot, slots[slot]))
            }
            return zip(ids, homes).map { id, home in probe(slots, for: id, from: home.slot, loaded: home.entry) }
        }
    }

    /// Loads the home slots of `ids`, so that removing or setting them next finds them in cache
    /// (see ``positions(of:)``).
    public mutating func warm(_ ids: some Sequence<EventID>) {
        var loaded: UInt64 = 0
        slots.withUnsafeBufferPointer { slots in
            for id in ids { loaded ^= slots[home(of: id)].position }
        }
        // Kept, so that the compiler cannot drop the loads as unused.
        warmth ^= loaded
    }

    /// For each of `ids` in order, the position stored for it; each id not found is stored at
    /// the next position from `first` (and gets nil), so that one met again later in `ids`
    /// finds the earlier one's. Looking up and storing visit an id's slots once, the home slots
    /// of all of `ids` loaded together first (see ``positions(of:)``).
    public mutating func claim(_ ids: [EventID], from first: UInt64) -> [UInt64?] {
        warm(ids)
        var next = first
        var found: [UInt64?] = []
        found.reserveCapacity(ids.count)
        for id in ids {
            if 2 * (count + 1) > slots.count { grow() }
            var slot = home(of: id)
            var position: UInt64?
            while slots[slot].position != 0 {
                if slots[slot].id == id {
                    position = slots[slot].position
                    break
                }
                slot = (slot + 1) & mask
            }
            if position == nil {
                slots[slot] = Slot(id: id, position: next)
                count += 1
                next += 1
            }
            found.append(position)
        }
        return found
    }

    /// What ``claim(_:from:)`` answers for `ids`, from `known` (the positions stored for them,
    /// looked up elsewhere), storing nothing: a new id met again within `ids` gets the position
    /// its first occurrence is claimed at.
    public static func claims(_ ids: [EventID], known: [UInt64?], from first: UInt64) -> [UInt64?] {
        var found = known
        var batch = EventPositionTable(minimumCapacity: ids.count)
        var next = first
        for (index, id) in ids.enumerated() where found[index] == nil {
            if let earlier = batch[id] {
                found[index] = earlier
            } else {
                batch.set(id, to: next)
                next += 1
            }
        }
        return found
    }

    /// How many entries the table holds without growing.
    public var capacity: Int { slots.count / 2 }

    /// Stores `position` for `id`, replacing what was stored for it; position 0 removes `id`.
    public mutating func set(_ id: EventID, to position: UInt64) {
        guard position != 0 else { return remove(id) }
        if 2 * (count + 1) > slots.count { grow() }
        var slot = home(of: id)
        while slots[slot].position != 0 {
            if slots[slot].id == id {
                slots[slot].position = position
                return
            }
            slot = (slot + 1) & mask
        }
        slots[slot] = Slot(id: id, position: position)
        count += 1
    }

    /// Removes `id` and what was stored for it; nothing happens if it is absent, or if
    /// `position` is given and another position is stored for it.
    public mutating func remove(_ id: EventID, ifAt position: UInt64? = nil) {
        var hole = home(of: id)
        while true {
            if slots[hole].position == 0 { return }
            if slots[hole].id == id { break }
            hole = (hole + 1) & mask
        }
        if let position, slots[hole].position != position { return }
        // Backward shift: an entry after the hole moves into it unless its home lies cyclically
        // in (hole, current], which would put it before its home and out of its probe run.
        var current = hole
        while true {
            current = (current + 1) & mask
            let entry = slots[current]
            if entry.position == 0 { break }
            let entryHome = home(of: entry.id)
            let staysPut =
                hole <= current
                ? (hole < entryHome && entryHome <= current)
                : (hole < entryHome || entryHome <= current)
            if staysPut { continue }
            slots[hole] = entry
            hole = current
        }
        slots[hole] = Slot(id: .zero, position: 0)
        count -= 1
    }

    private func home(of id: EventID) -> Int {
        let product = (id.high ^ key.0).multipliedFullWidth(by: id.low ^ key.1)
        return Int(truncatingIfNeeded: (product.high ^ product.low) >> shift) & mask
    }

    private mutating func grow() {
        let old = slots
        self = EventPositionTable(minimumCapacity: slots.count)
        for entry in old where entry.position != 0 {
            set(entry.id, to: entry.position)
        }
    }

    /// `count` free slots, written as zero bytes in one `memset`: a free slot is all zeros (the
    /// zero id at position 0). `Array(repeating:count:)` stores one slot after another, which in
    /// a debug build, for the window's 262,144 slots on every log opened, was a second of the
    /// test suite's CPU (BENCHMARKS-history.md).
    private static func freeSlots(count: Int) -> [Slot] {
        [Slot](unsafeUninitializedCapacity: count) { buffer, initialized in
            // No address only for no slots, and a table has at least 16.
            guard let base = buffer.baseAddress else { return }
            memset(base, 0, count * MemoryLayout<Slot>.stride)
            initialized = count
        }
    }

    private static let processKey: (UInt64, UInt64) = {
        var generator = SystemRandomNumberGenerator()
        return (generator.next(), generator.next())
    }()
}
