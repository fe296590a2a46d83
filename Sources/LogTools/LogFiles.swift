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
        guard fileSystem.exists(directory) else { throw LogToolError("there is no log in \(directory)") }
        let cursor = try LogCursor(directory: directory, after: max(from, 1) - 1, limit: to, fileSystem: fileSystem)
        // Reading, checksums and decoding run a few chunks ahead on a thread of their own.
        var stopped = false
        try ReadAhead<(StoredEvent, LogRecord)>.forEach(fill: { readChunk(from: cursor) }) { event, record in
            stopped = try !body(event, record)
            return !stopped
        }
        guard !stopped else { return }
        switch cursor.end {
        case .clean:
            break
        case .partial(let segment, let offset):
            if !DirectoryLock.isHeld(directory) {
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

    /// The next chunk of records from `cursor`, decoded. The records' bodies share one
    /// allocation, freed when the last of them is: a `Data` per record, allocated on one thread
    /// and freed later in another order, cost a replay a tenth of its time.
    ///
    /// The events of a chunk share their type names' strings, but not with other chunks: the
    /// caller holds one chunk while this thread makes the next, and a string both threads
    /// retained passed its cache line between the cores at every event.
    private static func readChunk(from cursor: LogCursor) -> ReadAhead<(StoredEvent, LogRecord)>.Chunk {
        typealias Ahead = ReadAhead<(StoredEvent, LogRecord)>
        var chunk = Ahead.Chunk()
        var reading = RecordBodies(capacity: Ahead.chunkBytes + (64 << 10))
        var found: [(position: UInt64, id: EventID, body: Range<Int>)] = []
        found.reserveCapacity(Ahead.chunkItems)
        var failure: (any Error)?
        do {
            while found.count < Ahead.chunkItems && reading.count < Ahead.chunkBytes {
                guard let record = try cursor.next(appendingBodyTo: &reading) else {
                    chunk.isLast = true
                    break
                }
                found.append(record)
            }
        } catch {
            failure = error
        }
        let bodies = reading.data()
        chunk.items.reserveCapacity(found.count)
        var names = TypeNameCache()
        for record in found {
            let record = LogRecord(position: record.position, id: record.id, body: bodies[record.body])
            do {
                chunk.items.append((try StoredEvent(decoding: record, names: &names), record))
            } catch {
                // A record that does not decode comes before whatever the cursor threw later.
                failure = error
                break
            }
        }
        if let failure {
            chunk.failure = failure
            chunk.isLast = true
        }
        return chunk
    }

    /// Calls `body` with each event from `from` through `to`, decoded.
    public static func forEach(
        directory: String, from: UInt64 = 1, to: UInt64? = nil, warn: (String) -> Void = { _ in },
        _ body: (StoredEvent) throws -> Void
    ) throws {
        try scan(directory: directory, from: from, to: to, warn: warn) { event, _ in
            try body(event)
            return true
        }
    }

    /// The size of the segment files.
    public static func bytes(in directory: String) -> Int64 {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".seg") }.reduce(0) { total, name in
            let size = (try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.size]) as? Int64
            return total + (size ?? 0)
        }
    }
}
