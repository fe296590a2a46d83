/// Finds the event ids that occur more than once in a sequence: exactly (whole ids are
/// compared, not hashes), in 24 bytes per id, sorted once at the end rather than hashed as
/// they come, so that checking a log of millions of events costs a fraction of its size.
///
/// `log verify` checks a log's ids with it, and `log import` the lines it reads.
public struct DuplicateIDFinder: Sendable {
    /// An id that occurs more than once, and where: positions, or line numbers, as added.
    public struct Duplicate: Sendable, Equatable, CustomStringConvertible {
        public var id: EventID
        /// Where it occurs, in increasing order (at least two).
        public var occurrences: [UInt64]

        public var description: String {
            "event id \(id) occurs \(occurrences.count) times: at "
                + occurrences.map(String.init).joined(separator: ", ")
        }
    }

    private struct Entry {
        var high: UInt64
        var low: UInt64
        var at: UInt64
    }

    private var entries: [Entry] = []

    public init() {}

    /// How many ids were added.
    public var count: Int { entries.count }

    /// Adds an id and where it occurs (a position, a line number).
    public mutating func add(_ id: EventID, at place: UInt64) {
        entries.append(Entry(high: id.high, low: id.low, at: place))
    }

    /// Every id added more than once, ordered by where it first occurs.
    public func duplicates() -> [Duplicate] {
        guard entries.count > 1 else { return [] }
        let sorted = entries.sorted { ($0.high, $0.low, $0.at) < ($1.high, $1.low, $1.at) }
        var found: [Duplicate] = []
        var start = 0
        while start < sorted.count {
            var end = start + 1
            while end < sorted.count, sorted[end].high == sorted[start].high, sorted[end].low == sorted[start].low {
                end += 1
            }
            if end - start > 1 {
                found.append(
                    Duplicate(
                        id: EventID(high: sorted[start].high, low: sorted[start].low),
                        occurrences: sorted[start..<end].map(\.at)))
            }
            start = end
        }
        return found.sorted { $0.occurrences[0] < $1.occurrences[0] }
    }
}
