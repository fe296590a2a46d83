import Bus
import EventLog

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads a log's segment files directly, without the bus: what `log show`, `log stats`,
/// `log export`, `replay` and `show --at` read.
///
/// Everything the log acknowledged is read, or the read fails naming where: a damaged record
/// is an error (``EventLogError/corruptRecord(segment:offset:position:reason:)``), and so is
/// the end of the data at bytes that are not a torn write. A torn write at the end, which the
/// log never acknowledged, ends the read with a warning when no bus holds the log.
public enum LogFiles {
    /// Calls `body` with each event from `from` through `to`, decoded, and its record (the
    /// envelope bytes as stored); `body` returns false to stop early. A record that does not
    /// decode is an error naming its position.
    public static func scan(
        directory: String, from: UInt64 = 1, to: UInt64? = nil, fileSystem: any FileSystem = PosixFileSystem(),
        warn: (String) -> Void = { _ in }, _ body: (StoredEvent, LogRecord) throws -> Bool
    ) throws {
        try read(
            directory: directory, from: from, to: to, fileSystem: fileSystem, warn: warn,
            item: { event, bodies, found in
                (event, LogRecord(position: found.position, id: found.id, body: bodies[found.body]))
            }, body)
    }

    /// ``scan(directory:from:to:fileSystem:warn:_:)`` without the records, for readers that
    /// need only the events (`replay`, `show`): the reading thread makes no record for each.
    public static func scanEvents(
        directory: String, from: UInt64 = 1, to: UInt64? = nil, fileSystem: any FileSystem = PosixFileSystem(),
        warn: (String) -> Void = { _ in }, _ body: (StoredEvent) throws -> Bool
    ) throws {
        try read(
            directory: directory, from: from, to: to, fileSystem: fileSystem, warn: warn,
            item: { event, _, _ in event }, body)
    }

    /// Calls `body` with each event from `from` through `to`, decoded.
    public static func forEach(
        directory: String, from: UInt64 = 1, to: UInt64? = nil, warn: (String) -> Void = { _ in },
        _ body: (StoredEvent) throws -> Void
    ) throws {
        try scanEvents(directory: directory, from: from, to: to, warn: warn) { event in
            try body(event)
            return true
        }
    }

    /// A record the cursor read: where its body lies among its chunk's bodies.
    private typealias Found = (position: UInt64, id: EventID, body: Range<Int>)

    /// Reads the records from `from` through `to`, a chunk at a time on a thread of its own,
    /// makes each an `Item` with `item`, and calls `body` with each until it returns false.
    private static func read<Item: Sendable>(
        directory: String, from: UInt64, to: UInt64?, fileSystem: any FileSystem, warn: (String) -> Void,
        item: @escaping @Sendable (StoredEvent, Data, Found) -> Item, _ body: (Item) throws -> Bool
    ) throws {
        guard fileSystem.exists(directory) else { throw LogToolError("there is no log in \(directory)") }
        let cursor = try LogCursor(directory: directory, after: max(from, 1) - 1, limit: to, fileSystem: fileSystem)
        // Reading, checksums and decoding run a few chunks ahead on a thread of their own.
        var stopped = false
        try ReadAhead<Item>.forEach(read: { readPart(from: cursor, item: item) }) { next in
            stopped = try !body(next)
            return !stopped
        }
        guard !stopped else { return }
        switch cursor.end {
        case .clean:
            try checkNothingAcknowledgedIsMissing(
                after: cursor.nextPosition - 1, to: to, in: directory, segment: cursor.segmentName,
                fileSystem: fileSystem, warn: warn)
        case .partial(let segment, let offset):
            let writing: Bool
            do {
                writing = try DirectoryLock.isHeld(directory)
            } catch {
                // Everything was read: the tail's only doubt is whose it is, said with the warning.
                warn("cannot tell whether a writer holds the log (\(error)); if none does:")
                writing = false
            }
            if !writing {
                warn(
                    "the log ends with a torn write at byte \(offset) of \(segment), after position "
                        + "\(cursor.nextPosition - 1): it was never acknowledged, and the bus cuts it when it starts")
            }
        case .invalid(let segment, let offset, let reason):
            throw LogToolError(
                "the log cannot be read past position \(cursor.nextPosition - 1): \(reason) at byte \(offset) of "
                    + "\(segment), and it is not a torn write; `bureau log verify` lists the damage and "
                    + "`bureau log repair` moves it aside")
        }
    }

    /// Throws when the data ended cleanly at position `last` but the log's recovery point says
    /// it acknowledged more (the newest segment cut at a record's end, or gone) and the read was
    /// to go on: the rest was lost, and a tool that read only part of the log says so. While a
    /// writer holds the log, what it acknowledged since the data was read is not a loss.
    private static func checkNothingAcknowledgedIsMissing(
        after last: UInt64, to: UInt64?, in directory: String, segment: String?, fileSystem: any FileSystem,
        warn: (String) -> Void
    ) throws {
        let acknowledged = LogCursor.acknowledged(in: directory, fileSystem: fileSystem)
        guard acknowledged > last, to.map({ $0 > last }) ?? true else { return }
        let message =
            "the log ends at position \(last)\(segment.map { " (in \($0))" } ?? ""), but positions through "
            + "\(acknowledged) were acknowledged"
        do {
            if try DirectoryLock.isHeld(directory) { return }
        } catch {
            warn("\(message); cannot tell whether a writer holds the log (\(error)), which may have written them since")
            return
        }
        throw LogToolError(
            "\(message): they are missing; `bureau log verify` lists the damage and `bureau log repair` puts a "
                + "RecordLost in place of each lost position")
    }

    /// The next part of the log from `cursor`: its records read and checked on the reading
    /// thread, the decoding left for whichever thread comes to it (see ``ReadAhead``), each
    /// event made an `Item` by `item` from itself, the part's bodies and where its own lies.
    /// The records' bodies share one allocation, freed when the last of them is: a `Data` per
    /// record, allocated on one thread and freed later in another order, cost a replay a tenth
    /// of its time.
    ///
    /// The events' type names are the schemas' literals, which count no references; a name the
    /// schemas do not know is shared by the events of a chunk but not with other chunks: the
    /// caller holds one chunk while the next is made, and a string both threads retained passed
    /// its cache line between the cores at every event.
    private static func readPart<Item: Sendable>(
        from cursor: LogCursor, item: @escaping @Sendable (StoredEvent, Data, Found) -> Item
    ) -> ReadAhead<Item>.Part {
        typealias Ahead = ReadAhead<Item>
        var reading = RecordBodies(capacity: Ahead.chunkBytes + (64 << 10))
        var found: [Found] = []
        found.reserveCapacity(Ahead.chunkItems)
        var failure: (any Error)?
        var isLast = false
        do {
            while found.count < Ahead.chunkItems && reading.count < Ahead.chunkBytes {
                guard let record = try cursor.next(appendingBodyTo: &reading) else {
                    isLast = true
                    break
                }
                found.append(record)
            }
        } catch {
            failure = error
            isLast = true
        }
        let bodies = reading.data()
        let (records, readFailure, last) = (found, failure, isLast)
        return Ahead.Part(
            finish: {
                var chunk = Ahead.Chunk()
                chunk.isLast = last
                chunk.items.reserveCapacity(records.count)
                var names = TypeNameCache()
                for record in records {
                    do {
                        let event = try StoredEvent(decoding: bodies[record.body], at: record.position, names: &names)
                        chunk.items.append(item(event, bodies, record))
                    } catch {
                        // A record that does not decode comes before whatever the cursor threw later.
                        chunk.failure = error
                        chunk.isLast = true
                        return chunk
                    }
                }
                chunk.failure = readFailure
                return chunk
            }, isLast: last)
    }
}
