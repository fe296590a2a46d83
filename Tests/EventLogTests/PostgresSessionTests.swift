import Foundation
import PostgresStore
import TestSupport
import Testing

/// The store's statements and answers in PostgreSQL's binary format, through libpq: every type
/// the store sends comes back as it went, in arrays too; a column read as another type, or a
/// NULL where a value is needed, is an error naming the column; a statement the server refuses
/// says its SQLSTATE and leaves the connection usable. Against a server from Debian's packages;
/// skipped, saying why, where one cannot be started.
// Starts PostgreSQL and waits for it: on threads of its own, off the cooperative pool.
@Suite(.requiresPostgreSQL, .ownThreads)
struct PostgresSessionTests {
    static func session() throws -> PostgresSession {
        try PostgresSession.connect(
            PostgresStoreURL(parsing: try TestPostgres.database()), logger: TestLogging.logger("bureau.store"))
    }

    @Test func eachParameterComesBackAsItWent() throws {
        let session = try Self.session()
        defer { session.close() }
        let id = UUID()
        let body = Data([0, 1, 0xFF, 0x27, 0x5C])
        let rows = try session.query(
            "SELECT \(Int64.min), \(Int64(-2)), \(Int32(-7)), \(id), \(body), \(""), \("zürich 'quoted'") = 'zürich ''quoted''', \(Data())",
            what: "echoing parameters")
        let row = try #require(rows.first)
        #expect(try row.integer(0) == .min)
        #expect(try row.integer(1) == -2)
        #expect(try row.integer(2) == -7)
        #expect(try row.uuid(3) == id)
        #expect(try row.bytes(4) == body)
        #expect(try row.bool(6))
        #expect(try row.bytes(7).isEmpty)
    }

    @Test func arraysGoWholeAndEmpty() throws {
        let session = try Self.session()
        defer { session.close() }
        let ids = [UUID(), UUID()]
        let when = Date(timeIntervalSince1970: 1_700_000_000.123456)
        let rows = try session.query(
            """
            SELECT cardinality(\(ids)), \(ids[1]) = ANY(\(ids)), cardinality(\([Int64]())),
                   (\([when]))[1] = to_timestamp(1700000000.123456),
                   array_to_string(\(["a", "b,c"]), '|') = 'a|b,c', (\([Data([1, 2]), Data()]))[2]
            """, what: "arrays")
        let row = try #require(rows.first)
        #expect(try row.integer(0) == 2)
        #expect(try row.bool(1))
        #expect(try row.integer(2) == 0)
        #expect(try row.bool(3))
        #expect(try row.bool(4))
        #expect(try row.bytes(5).isEmpty)
    }

    @Test func aColumnOfAnotherTypeOrANullIsNamed() throws {
        let session = try Self.session()
        defer { session.close() }
        let row = try #require(
            try session.query("SELECT 'x'::text AS word, NULL::bytea AS nothing", what: "two columns").first)
        let wrong = #expect(throws: PostgresRow.DecodingError.self) { try row.integer(0) }
        #expect(wrong?.description.contains("word") == true, "\(String(describing: wrong))")
        let null = #expect(throws: PostgresRow.DecodingError.self) { try row.bytes(1) }
        #expect(null?.description.contains("nothing is NULL") == true, "\(String(describing: null))")
        #expect(try row.optionalBytes(1) == nil)
    }

    @Test func aRefusedStatementSaysItsSQLStateAndTheConnectionGoesOn() throws {
        let session = try Self.session()
        defer { session.close() }
        let error = #expect(throws: PostgresStoreError.self) {
            try session.query("SELECT * FROM no_such_table", what: "reading a table that is not there")
        }
        #expect(
            error
                == .statement(
                    "reading a table that is not there", sqlState: "42P01",
                    message: #"relation "no_such_table" does not exist"#))
        #expect(try session.query("SELECT \(Int64(41)) + 1", what: "going on").first?.integer(0) == 42)
    }

    @Test func theServersWarningsGoToTheLogAndItsOtherNoticesAtDebugLevel() throws {
        let log = CapturedLog()
        let session = try PostgresSession.connect(
            PostgresStoreURL(parsing: try TestPostgres.database()), logger: log.logger("bureau.store"))
        defer { session.close() }
        // A lock released that was not held: PostgreSQL answers false, with a WARNING.
        let released = try session.query(
            "SELECT pg_advisory_unlock(\(Int64(424_242)))", what: "releasing a lock not held")
        #expect(try released.first?.bool(0) == false)
        // The second says "already exists, skipping": a NOTICE.
        for _ in 0..<2 { try session.query("CREATE TABLE IF NOT EXISTS noted (x int)", what: "creating a table") }
        #expect(log.lines.filter { $0.level == .warning }.map(\.message) == ["the store warns"])
        #expect(log.lines.contains { $0.level == .debug && $0.message == "the store notes" })
    }
}
