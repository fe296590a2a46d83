import PostgresStore
import Testing

/// Store URLs as people type them, and the message each mistake gets; a password is never shown.
struct PostgresStoreURLTests {
    @Test func aURLNamesTheUserThePasswordTheHostsAndTheDatabase() throws {
        let url = try PostgresStoreURL(
            parsing: "postgres://bureau:s%40cret@db1:5433,[::1],db2/events?connect_timeout=3")
        #expect(url.user == "bureau")
        #expect(url.password == "s@cret")
        #expect(url.hosts == [.init(name: "db1", port: 5433), .init(name: "::1"), .init(name: "db2")])
        #expect(url.database == "events")
        #expect(url.connectTimeout == .seconds(3))
        #expect(url.description == "postgres://bureau:***@db1:5433,[::1]:5432,db2:5432/events")
    }

    @Test func thePasswordMayComeFromPGPASSWORD() throws {
        let url = try PostgresStoreURL(parsing: "postgresql://bureau@db/events", environment: ["PGPASSWORD": "pw"])
        #expect(url.password == "pw")
        #expect(
            try PostgresStoreURL(parsing: "postgres://bureau:inline@db/events", environment: ["PGPASSWORD": "pw"])
                .password == "inline")
    }

    @Test(arguments: [
        ("mysql://u@h/d", "a store URL starts with postgres://"),
        ("postgres://u@h", "name the database after the hosts"),
        ("postgres://h/d", "name the user before the hosts"),
        ("postgres://u@h:0/d", "the port '0' of h is not a number from 1 to 65535"),
        ("postgres://u@h:99999/d", "the port '99999' of h is not a number from 1 to 65535"),
        ("postgres://u@h,/d", "a host is empty"),
        ("postgres://u@[::1/d", "lacks its ]"),
        ("postgres://u@h/d?sslmode=require", "sslmode=require is not supported"),
        ("postgres://u@h/d?connect_timeout=nan", "connect_timeout takes whole seconds"),
        ("postgres://u@h/d?pool=5", "unknown parameter 'pool'"),
        ("postgres://u@h/d?query_timeout=0", "query_timeout takes whole seconds from 1 to 3600"),
    ])
    func eachMistakeIsNamed(text: String, says: String) {
        let error = #expect(throws: PostgresStoreError.self) { try PostgresStoreURL(parsing: text) }
        #expect(error?.description.contains(says) == true, "\(String(describing: error))")
    }

    @Test func aURLThatDoesNotParseIsShownWithoutItsPassword() {
        let error = #expect(throws: PostgresStoreError.self) {
            try PostgresStoreURL(parsing: "postgres://u:hunter2@h:x/d")
        }
        #expect(error?.description.contains("hunter2") == false)
        #expect(error?.description.contains("postgres://u:***@h:x/d") == true)
    }
}
