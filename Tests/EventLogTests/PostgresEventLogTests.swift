import BureauSchemas
import EventLog
import Foundation
import Guards
import PostgresStore
import Synchronization
import TestServers
import TestSupport
import Testing

/// What the PostgreSQL store adds to the ``EventLog`` contract: ids recognised for ever, one
/// writer under a lock with a standby that takes over, fencing of a writer that lost its
/// connection, a schema version it checks, and errors that say what is wrong. Against a server
/// from Debian's packages; skipped, saying why, where one cannot be started.
// Starts and stops PostgreSQL and waits for it: on threads of its own, off the cooperative pool.
@Suite(.requiresPostgreSQL, .ownThreads)
struct PostgresEventLogTests {
    static func open(
        _ url: String, standby: Bool = false, stop: @escaping @Sendable () -> Bool = { false }
    ) throws
        -> PostgresEventLog
    {
        var options = PostgresEventLog.Options()
        options.standby = standby
        options.connectWait = .zero
        options.shouldStopWaiting = stop
        return try PostgresEventLog(
            url: PostgresStoreURL(parsing: url), options: options, logger: TestLogging.logger("bureau.log"))
    }

    static func records(_ positions: ClosedRange<UInt64>) -> [LogRecord] {
        positions.map { LogRecord(position: $0, id: EventID.random(), body: Data("event \($0)".utf8)) }
    }

    @Test func idsAreRecognisedForEverAndTheHeadContinuesAfterAReopen() throws {
        let url = try TestPostgres.database()
        let first = Self.records(1...300)
        do {
            let log = try Self.open(url)
            try log.append(Array(first[0..<100]))
            try log.append(Array(first[100...]))
            try log.close()
        }
        let log = try Self.open(url)
        #expect(log.head == 300)
        #expect(log.lastRecord == first.last)
        #expect(log.positions(of: [first[0].id, .random(), first[299].id]) == [1, nil, 300])
        try log.append(Self.records(301...302))
        #expect(
            try log.makeReader().read(after: 298, through: 302, limit: 10, maxBytes: 1 << 20).map(\.position) == [
                299, 300, 301, 302,
            ])
    }

    @Test func aSecondWriterIsRefusedAndAStandbyTakesOverWhenTheWriterEnds() async throws {
        let url = try TestPostgres.database()
        let active = try Self.open(url)
        try active.append(Self.records(1...10))
        #expect(throws: PostgresStoreError.writerLockHeld(try PostgresStoreURL(parsing: url).description)) {
            try Self.open(url)
        }
        // The standby polls for the lock with libpq and sleeps between tries: on a thread of its
        // own (an unstructured task does not keep the suite's `.ownThreads` preference), and
        // for a minute at most, should the lock never come free.
        let deadline = ContinuousClock.now + .seconds(60)
        let standby = Task {
            try await OwnThread.run(name: "test-standby") {
                try Self.open(url, standby: true) { ContinuousClock.now >= deadline }
            }
        }
        // The standby is waiting: it holds no lock and has written nothing.
        #expect(try active.makeReader().read(after: 0, through: 100, limit: 100, maxBytes: 1 << 20).count == 10)
        try active.close()
        let successor = try await standby.value
        #expect(successor.head == 10)
        try successor.append(Self.records(11...12))
        #expect(successor.head == 12)
    }

    @Test func aWriterWhoseConnectionWasCutNeverWritesAgain() throws {
        let server = try TestPostgres.server()
        let database = try server.createDatabase()
        // A connection cut while a statement is on its way may leave the writer waiting for an
        // answer that never comes: the query timeout bounds that wait.
        let url = server.url(database: database) + "?query_timeout=5"
        let cut = try Self.open(url)
        try cut.append(Self.records(1...5))
        #expect(try server.endConnections(to: database) == 1)
        #expect(throws: EventLogError.self) { try cut.append(Self.records(6...6)) }
        // Its lock went with its connection: another takes over and continues without a gap.
        let successor = try Self.open(url)
        #expect(successor.head == 5)
        try successor.append(Self.records(6...8))
        // The first never writes again, even though the server is there.
        #expect(throws: EventLogError.self) { try cut.append(Self.records(6...6)) }
        #expect(throws: EventLogError.self) { try cut.commit() }
        let positions = try server.sql(
            "SELECT string_agg(position::text, ',' ORDER BY position) FROM bureau_events", database: database)
        #expect(positions.trimmingCharacters(in: .whitespacesAndNewlines) == "1,2,3,4,5,6,7,8")
    }

    @Test func aStandbyAskedToStopWhileWaitingSaysSo() throws {
        let url = try TestPostgres.database()
        let active = try Self.open(url)
        let asked = Mutex(0)
        #expect(throws: PostgresStoreError.stoppedWaiting) {
            try Self.open(url, standby: true) {
                asked.withLock {
                    $0 += 1; return $0 > 2
                }
            }
        }
        try active.close()
    }

    @Test func aNewerSchemaIsRefusedNamingBothVersions() throws {
        let server = try TestPostgres.server()
        let database = try server.createDatabase()
        try Self.open(server.url(database: database)).close()
        try server.sql("UPDATE bureau_store SET schema_version = 7", database: database)
        let error = #expect(throws: PostgresStoreError.self) { try Self.open(server.url(database: database)) }
        #expect(error == .newerSchema(found: 7, known: 1))
        #expect(error?.description.contains("newer than this bureau knows") == true)
    }

    @Test func theEnvelopesColumnsAreFilledForSQLReaders() throws {
        let server = try TestPostgres.server()
        let database = try server.createDatabase()
        let log = try Self.open(server.url(database: database))
        let id = EventID.random()
        var envelope = Bureau_Envelope()
        envelope.position = 1
        envelope.id = Data(id.bytes)
        envelope.type = "bureau.watchlist.PairAdded"
        envelope.commitTime.seconds = 1_700_000_000
        envelope.causation = 41
        let record = LogRecord(position: 1, id: id, body: try envelope.serializedData())
        try log.append([record])
        let row = try server.sql(
            "SELECT type, extract(epoch from committed_at)::bigint, causation, correlation IS NULL, id FROM bureau_events",
            database: database)
        #expect(
            row.trimmingCharacters(in: .whitespacesAndNewlines)
                == "bureau.watchlist.PairAdded|1700000000|41|t|\(id)")
    }

    @Test func aWrongPasswordAndAMissingDatabaseAreRefusedAndANoServerPortIsUnreachable() throws {
        let server = try TestPostgres.server()
        let wrongPassword = #expect(throws: PostgresStoreError.self) {
            try Self.open(server.url(database: "postgres", password: "not-it"))
        }
        #expect(wrongPassword?.description.contains("refused the connection") == true)
        #expect(wrongPassword?.description.contains("not-it") == false)
        let noDatabase = #expect(throws: PostgresStoreError.self) {
            try Self.open(server.url(database: "no_such_database"))
        }
        #expect(noDatabase?.description.contains("no_such_database") == true)
        let port = try TCPPorts.free()
        let unreachable = #expect(throws: PostgresStoreError.self) {
            try Self.open("postgres://postgres:x@127.0.0.1:\(port)/db")
        }
        #expect(unreachable?.description.contains("cannot reach the store") == true)
        #expect(unreachable?.description.contains("127.0.0.1:\(port)") == true)
    }
}
