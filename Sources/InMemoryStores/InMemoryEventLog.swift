import EventLog
import Synchronization

/// The event log kept in memory: the twin of ``FileEventLog`` for tests. Nothing survives the process.
public final class InMemoryEventLog: EventLog, @unchecked Sendable {
    private let records = Mutex<[LogRecord]>([])
    private var window: DeduplicationWindow

    public init(deduplicationWindow: Int = 100_000) {
        window = DeduplicationWindow(capacity: deduplicationWindow)
    }

    public var head: UInt64 { records.withLock { UInt64($0.count) } }
    public var lastRecord: LogRecord? { records.withLock { $0.last } }

    public func position(of id: EventID) -> UInt64? {
        window.position(of: id)
    }

    public func positions(of ids: [EventID]) -> [UInt64?] {
        window.positions(of: ids)
    }

    public func claimPositions(_ ids: [EventID], from first: UInt64) -> [UInt64?] {
        window.claim(ids, from: first)
    }

    public func append(_ newRecords: [LogRecord]) throws {
        try store(newRecords)
        window.insert(newRecords)
    }

    /// Appends the batch's records; ids claimed for them take their places in the window, as
    /// in ``FileEventLog``.
    public func append(_ batch: RecordBatch) throws {
        try store(batch.records)
        window.insert(batch.entries)
    }

    /// Checks that `newRecords` continue the log and fit, and keeps them; if they do not,
    /// nothing is kept and the positions claimed for them are forgotten.
    private func store(_ newRecords: [LogRecord]) throws {
        do {
            try records.withLock { records in
                var expected = UInt64(records.count) + 1
                for record in newRecords {
                    guard record.position == expected else {
                        throw EventLogError.positionOutOfOrder(expected: expected, got: record.position)
                    }
                    guard record.body.count <= LogRecord.maxBodyBytes else {
                        throw EventLogError.recordTooLarge(bytes: record.body.count, limit: LogRecord.maxBodyBytes)
                    }
                    expected += 1
                }
                records += newRecords
            }
        } catch {
            window.cancelClaims()
            throw error
        }
    }

    public func commit() throws {}
    public func syncIfDue() throws {}
    public func close() throws {}

    public func makeReader() -> any EventLogReader {
        Reader(log: self)
    }

    final class Reader: EventLogReader {
        let log: InMemoryEventLog
        init(log: InMemoryEventLog) { self.log = log }

        func read(after position: UInt64, through: UInt64, limit: Int, maxBytes: Int) throws -> [LogRecord] {
            log.records.withLock { records in
                let end = min(UInt64(records.count), through)
                guard position < end else { return [] }
                var result: [LogRecord] = []
                var bytes = 0
                for index in Int(position)..<Int(end) where result.count < limit && bytes < maxBytes {
                    result.append(records[index])
                    bytes += records[index].body.count
                }
                return result
            }
        }
    }
}
