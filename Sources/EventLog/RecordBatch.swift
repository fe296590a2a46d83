#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Records to append with their bodies in one buffer: what the bus builds for each batch
/// without a `Data` per record, and ``FileEventLog`` frames straight from the buffer (as
/// Kafka's broker takes a producer's record batch whole).
///
/// Kept by its builder and emptied for the next batch (``removeAll()``), so that the buffer's
/// memory is reused rather than allocated, and faulted in, every batch.
public struct RecordBatch: Sendable {
    /// One record: its position, its id and where its body lies in ``bodies``.
    public struct Entry: Sendable, Equatable {
        public let position: UInt64
        public let id: EventID
        public let body: Range<Int>
    }

    /// Every record's body, one after another.
    public private(set) var bodies: [UInt8] = []
    public private(set) var entries: [Entry] = []

    public init() {}

    public var isEmpty: Bool { entries.isEmpty }
    public var count: Int { entries.count }

    /// Adds the record at `position` whose body `write` appends to the buffer it is given;
    /// returns where the body lies in ``bodies``.
    @discardableResult
    public mutating func append(position: UInt64, id: EventID, body write: (inout [UInt8]) -> Void) -> Range<Int> {
        let start = bodies.count
        write(&bodies)
        let body = start..<bodies.count
        entries.append(Entry(position: position, id: id, body: body))
        return body
    }

    /// Adds the record at `position` with a copy of `body`.
    public mutating func append(position: UInt64, id: EventID, body: some ContiguousBytes) {
        append(position: position, id: id) { bodies in body.withUnsafeBytes { bodies.append(contentsOf: $0) } }
    }

    /// Makes room for `records` more records with `bodyBytes` more bytes of bodies.
    public mutating func reserve(records: Int, bodyBytes: Int) {
        entries.reserveCapacity(entries.count + records)
        bodies.reserveCapacity(bodies.count + bodyBytes)
    }

    /// Empties the batch, keeping its memory unless it grew past `keeping` bytes of bodies (a
    /// burst of large events), which are then given back.
    public mutating func removeAll(keeping: Int = 4 << 20) {
        let keep = bodies.capacity <= keeping
        bodies.removeAll(keepingCapacity: keep)
        entries.removeAll(keepingCapacity: keep)
    }

    /// The records, their bodies slices of one copy of the buffer: for a log that keeps records
    /// as they are.
    public var records: [LogRecord] {
        let all = Data(bodies)
        return entries.map { entry in
            LogRecord(
                position: entry.position, id: entry.id,
                body: all[all.startIndex + entry.body.lowerBound..<all.startIndex + entry.body.upperBound])
        }
    }
}
