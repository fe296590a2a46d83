import BusTesting
import Foundation
import Guards
import TestServers

#if canImport(Glibc)
    import Glibc
#endif

/// One PostgreSQL server for the whole test process, started on first use and stopped when the
/// process exits; each test takes a database of its own with ``database(prefix:)``.
public enum TestPostgres {
    /// Why there is no server: PostgreSQL cannot be started here, or starting it failed.
    public static var unavailable: String? {
        if let reason = PostgresServer.unavailable { return reason }
        if case .failure(let error) = shared { return "PostgreSQL did not start: \(error)" }
        return nil
    }

    /// ``unavailable``, found on a thread of its own (the first call starts the server and waits
    /// for `initdb` and `pg_ctl`, which must not hold a thread of the cooperative pool), and said
    /// on standard error when there is a reason: for a suite's condition trait, whose comment
    /// cannot carry it.
    public static func unavailableOffThePool() async -> String? {
        let reason: String?
        do {
            reason = try await OwnThread.run(name: "test-postgres") { unavailable }
        } catch {
            reason = "\(error)"
        }
        if let reason {
            FileHandle.standardError.write(Data("PostgreSQL tests skipped: \(reason)\n".utf8))
        }
        return reason
    }

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
