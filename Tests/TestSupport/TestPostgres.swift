import BusTesting
import Foundation
import Guards
import TestServers
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// One PostgreSQL server for the whole test process, started on first use and stopped when the
/// process exits; each test takes a database of its own with ``database(prefix:)``.
public enum TestPostgres {
    /// Why there is no server: PostgreSQL cannot be started here, or starting it failed.
    ///
    /// The first call starts the server and waits for `initdb` and `pg_ctl`: call it on a
    /// thread of its own (a `.ownThreads` suite), or use ``unavailableOffThePool()`` or the
    /// `.requiresPostgreSQL` trait (``Requirement``).
    public static var unavailable: String? {
        if let reason = PostgresServer.unavailable { return reason }
        if case .failure(let error) = shared { return "PostgreSQL did not start: \(error)" }
        return nil
    }

    /// ``unavailable``, found on a thread of its own, so that an async caller on the
    /// cooperative pool does not wait there for `initdb` and `pg_ctl`.
    public static func unavailableOffThePool() async -> String? {
        await Requirement.offThePool("test-postgres") { unavailable }
    }

    /// Ends the current test case as skipped, saying why, when there is no server: for the
    /// PostgreSQL case of a contract suite run against every store. Swift Testing 6.3's console
    /// calls a cancelled test case passed, without the reason, so the reason is also recorded as
    /// a known issue, which it shows (at `sourceLocation`) without failing the run. The first
    /// call waits for the server to start, on a thread of its own.
    public static func skipIfUnavailable(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        guard let reason = await unavailableOffThePool() else { return }
        try Requirement.skip(Requirement.comment(missing: missing, reason: reason), sourceLocation: sourceLocation)
    }

    /// What a test skipped for want of a server says first.
    static let missing = "no PostgreSQL server for the tests"

    static let shared: Result<PostgresServer, TestServerError> = {
        guard PostgresServer.unavailable == nil else {
            return .failure(TestServerError(PostgresServer.unavailable ?? ""))
        }
        do {
            let server = try PostgresServer.start()
            atexit { TestPostgres.stopShared() }
            return .success(server)
        } catch {
            return .failure(TestServerError("\(error)"))
        }
    }()

    static func stopShared() {
        if case .success(let server) = shared { server.stop() }
    }

    public static func server() throws -> PostgresServer {
        try shared.get()
    }

    /// A new, empty database on the shared server, as a store URL.
    public static func database(prefix: String = "test") throws -> String {
        let server = try server()
        return server.url(database: try server.createDatabase(prefix: prefix))
    }
}
