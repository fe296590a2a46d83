import BureauSchemas
import EventLog
// Thread.sleep: the waits here are on threads of their own.
import Foundation
import Logging

/// The event log in a PostgreSQL database: one row per event, one transaction per batch.
///
/// Only the process that holds the store's writer lock (a session advisory lock on the
/// connection it writes with) may open one; a second waits as a standby when asked to, and
/// takes over as soon as the lock is free (the holder's connection ended). A writer whose
/// connection ends has lost the lock with it, and never writes again: every later call throws.
///
/// ``append(_:)`` is the commit: the batch is one `INSERT` in its own transaction, durable
/// when it returns (with ``Durability/always``, which turns `synchronous_commit` on where the
/// server's default or `PGOPTIONS` had it off, and leaves a stronger setting as it is). A full disk
/// on the server rolls the batch back and is a refusal the caller may retry; a connection that
/// ends mid-batch leaves its outcome unknown, so the log refuses everything after it and the
/// daemon's next start reads what the server holds. Ids are unique for ever, not only within a
/// window.
public final class PostgresEventLog: EventLog, @unchecked Sendable {
    public struct Options: Sendable {
        /// `always` commits synchronously; `never` and `interval` turn `synchronous_commit` off
        /// for the writer (a server crash may then lose the last acknowledged batches).
        public var durability: Durability = .always
        /// Wait as a standby while another process holds the writer lock, instead of failing.
        public var standby = false
        /// How long to keep trying a server that does not answer at start.
        public var connectWait: Duration = .seconds(30)
        /// Called while waiting as a standby; returning true gives up (the daemon was asked to stop).
        public var shouldStopWaiting: @Sendable () -> Bool = { false }

        public init() {}
    }

    public let url: PostgresStoreURL
    private let session: PostgresSession
    private let logger: Logger
    public private(set) var head: UInt64 = 0
    public private(set) var lastRecord: LogRecord?
    /// Why the log refuses everything, once a write's outcome is unknown.
    private var failure: String?

    public init(url: PostgresStoreURL, options: Options = Options(), logger: Logger) throws {
        self.url = url
        self.logger = logger
        session = try PostgresSession.connect(url, wait: options.connectWait, logger: logger)
        do {
            try PostgresSchema.prepare(session)
            try Self.takeWriterLock(session, url: url, options: options, logger: logger)
            if options.durability != .always {
                try session.query("SET synchronous_commit = off", what: "setting the durability")
            } else {
                // `on` where it was `off`; `local`, `remote_write` and `remote_apply` already wait
                // for the local flush, and the last two for standbys too: not weakened.
                try session.query(
                    "SELECT set_config('synchronous_commit', 'on', false) WHERE current_setting('synchronous_commit') = 'off'",
                    what: "setting the durability")
            }
            let rows = try session.query(
                "SELECT position, id, body FROM bureau_events ORDER BY position DESC LIMIT 1",
                what: "reading the log's head")
            if let row = rows.first {
                let record = try PostgresLogReader.record(row)
                head = record.position
                lastRecord = record
            }
        } catch {
            session.close()
            throw error
        }
        logger.info(
            "the store is open",
            metadata: ["store.url": "\(url)", "store.host": "\(session.host)", "log.head": "\(head)"])
    }

    deinit {
        session.close()
    }

    private static func takeWriterLock(
        _ session: PostgresSession, url: PostgresStoreURL, options: Options, logger: Logger
    ) throws {
        var waiting = false
        while true {
            let rows = try session.query(
                "SELECT pg_try_advisory_lock(\(PostgresSchema.writerLockKey))", what: "taking the writer lock")
            if try rows.first?.bool(0) == true {
                if waiting {
                    logger.notice("the writer lock is free: this daemon takes over", metadata: ["store.url": "\(url)"])
                }
                return
            }
            guard options.standby else { throw PostgresStoreError.writerLockHeld("\(url)") }
            if !waiting {
                waiting = true
                logger.notice(
                    "another daemon writes to the store: waiting as its standby", metadata: ["store.url": "\(url)"])
            }
            if options.shouldStopWaiting() { throw PostgresStoreError.stoppedWaiting }
            // A poll, not a blocking pg_advisory_lock, so that a stop request is seen within it.
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    public func position(of id: EventID) -> UInt64? {
        positions(of: [id])[0]
    }

    /// One query for all of `ids`. A failed lookup cannot be answered as "unknown" (the id
    /// might be stored), so it fails the log: the next append throws.
    public func positions(of ids: [EventID]) -> [UInt64?] {
        guard !ids.isEmpty, failure == nil else { return ids.map { _ in nil } }
        do {
            let rows = try session.query(
                "SELECT id, position FROM bureau_events WHERE id = ANY(\(ids.map(UUID.init)))",
                what: "looking up event ids")
            var found: [EventID: UInt64] = [:]
            for row in rows {
                found[EventID(try row.uuid(0))] = try row.position(1)
            }
            return ids.map { found[$0] }
        } catch {
            fail("\(error)")
            return ids.map { _ in nil }
        }
    }

    public func append(_ records: [LogRecord]) throws {
        if let failure { throw EventLogError.failed(failure) }
        guard !records.isEmpty else { return }
        var expected = head + 1
        var rows = Rows(capacity: records.count)
        for record in records {
            guard record.position == expected else {
                throw EventLogError.positionOutOfOrder(expected: expected, got: record.position)
            }
            guard record.body.count <= LogRecord.maxBodyBytes else {
                throw EventLogError.recordTooLarge(bytes: record.body.count, limit: LogRecord.maxBodyBytes)
            }
            rows.add(record)
            expected += 1
        }
        do {
            try session.query(
                """
                INSERT INTO bureau_events (position, id, type, committed_at, causation, correlation, body)
                SELECT p, i, NULLIF(t, ''), NULLIF(c, 'epoch'), NULLIF(k, 0), NULLIF(r, \(UUID.none)), b
                FROM unnest(\(rows.positions), \(rows.ids), \(rows.types), \(rows.times), \(rows.causations),
                            \(rows.correlations), \(rows.bodies)) AS u(p, i, t, c, k, r, b)
                """, what: "storing \(records.count) event(s)")
        } catch {
            throw classify(error)
        }
        head = expected - 1
        lastRecord = records.last
    }

    /// What a failed insert means for the caller: a full disk rolled the batch back (a
    /// refusal); anything else leaves its outcome unknown or another writer in the way.
    private func classify(_ error: PostgresStoreError) -> EventLogError {
        guard case .statement(_, let sqlState, _) = error else {
            fail("\(error)")
            return .failed("\(error)")
        }
        switch sqlState {
        case "53100"?:
            // disk_full: the statement failed, so its transaction stored nothing.
            return .diskFull(path: "\(url)")
        case "23505"?:
            fail("\(error); another process wrote to the store, so this one stops writing")
        case .some(let state) where state.hasPrefix("22") || state.hasPrefix("42"):
            // A data or syntax error: nothing was stored, but this is a bug, not a state to go on from.
            fail("\(error)")
        default:
            fail("\(error); whether the batch was stored is unknown until the store is reopened")
        }
        return .failed(failure ?? "\(error)")
    }

    private func fail(_ reason: String) {
        guard failure == nil else { return }
        failure = reason
        logger.critical("the store refuses further writes", metadata: ["store.error": "\(reason)"])
        // The writer lock goes with the connection: a standby may take over at once.
        session.close()
    }

    /// Nothing to do: every append was its own transaction.
    public func commit() throws {
        if let failure { throw EventLogError.failed(failure) }
    }

    public func syncIfDue() throws {}

    /// Releases the writer lock before the connection goes, so that a daemon opened right
    /// after this returns finds it free (a server ends a closed session a moment later).
    public func close() throws {
        if failure == nil {
            do {
                _ = try session.query(
                    "SELECT pg_advisory_unlock(\(PostgresSchema.writerLockKey))", what: "releasing the writer lock")
            } catch {
                // The server releases it when the session ends, a moment after the close below.
                logger.warning(
                    "could not release the writer lock; the server does once the session ends",
                    metadata: ["store.error": "\(error)"])
            }
        }
        session.close()
    }

    public func makeReader() throws -> any EventLogReader {
        try PostgresLogReader(url: url, logger: logger)
    }
}

/// The columns of a batch, one array each, for one `INSERT … SELECT FROM unnest(…)`.
private struct Rows {
    var positions: [Int64] = []
    var ids: [UUID] = []
    var types: [String] = []
    var times: [Date] = []
    var causations: [Int64] = []
    var correlations: [UUID] = []
    var bodies: [Data] = []

    init(capacity: Int) {
        positions.reserveCapacity(capacity)
        ids.reserveCapacity(capacity)
        types.reserveCapacity(capacity)
        times.reserveCapacity(capacity)
        causations.reserveCapacity(capacity)
        correlations.reserveCapacity(capacity)
        bodies.reserveCapacity(capacity)
    }

    /// The record's columns; those its body does not hold (it is not an envelope) are empty.
    mutating func add(_ record: LogRecord) {
        positions.append(Int64(record.position))
        ids.append(UUID(record.id))
        bodies.append(record.body)
        record.body.withUnsafeBytes { raw in
            // The sequencer checked every envelope before it became a record; these columns are
            // for queries, and the body beside them is the record.
            let header = try? EnvelopeScanner.scan(raw)
            types.append(header?.typeRange.map { String(decoding: raw[$0], as: UTF8.self) } ?? "")
            let time = header?.commitTimeRange.flatMap { try? EnvelopeScanner.timestamp(in: raw, at: $0) }
            times.append(
                Date(timeIntervalSince1970: Double(time?.seconds ?? 0) + Double(time?.nanos ?? 0) / 1_000_000_000))
            causations.append(Int64(bitPattern: header?.causation ?? 0))
            correlations.append(
                header?.correlationRange.flatMap { range in
                    range.count == 16
                        ? EventID(bytes: UnsafeRawBufferPointer(rebasing: raw[range])).map(UUID.init) : nil
                } ?? .none)
        }
    }
}
