import Bus
import BusTesting
import EventLog
import Foundation
import PostgresStore
import TestServers
import TestSupport
import Testing
import ZeroMQBus

#if canImport(Glibc)
    import Glibc
#endif

/// Faults of the PostgreSQL store's server: a full disk refuses the batch and nothing of it is
/// stored, then writes resume once there is space; a server that is not up yet is waited for,
/// each attempt said, and a wrong password is refused at once. Real servers; skipped, saying
/// why, where PostgreSQL cannot be started (and the full disk where tmpfs cannot be mounted).
// Starts servers, mounts, and writes through blocking calls: off the cooperative pool.
@Suite(.requiresPostgreSQL, .ownThreads, .timeLimit(.minutes(3)))
struct PostgresStoreFaultTests {
    @Test(.enabled(if: Tmpfs.canMount, "needs root with CAP_SYS_ADMIN to mount a small tmpfs for the database"))
    func aFullDiskOnTheServerRefusesTheBatchWholeAndWritesResumeOnceThereIsSpace() throws {
        let server = try TestPostgres.server()
        let directory = try TemporaryDirectory("pgfull")
        let mountPoint = directory.file("small")
        let mount = try Tmpfs(mountPoint, megabytes: 16)
        defer { mount.unmount() }
        // The directory and its parents must be reachable by the server's user.
        for path in [directory.path, mountPoint] { chmod(path, 0o755) }
        if let user = getpwnam("postgres") { chown(mountPoint, user.pointee.pw_uid, user.pointee.pw_gid) }
        let name = "small_\(UInt32.random(in: 0...UInt32.max))"
        try server.sql("CREATE TABLESPACE \(name) LOCATION '\(mountPoint)'")
        try server.sql("CREATE DATABASE \(name) TABLESPACE \(name)")
        defer {
            _ = try? server.sql("DROP DATABASE IF EXISTS \(name)")
            _ = try? server.sql("DROP TABLESPACE IF EXISTS \(name)")
        }
        let log = try PostgresEventLog(
            url: PostgresStoreURL(parsing: server.url(database: name)), logger: TestLogging.logger("bureau.log"))
        var generator = TestSeed.generator(for: "full disk: the bodies")
        func batch(from first: UInt64) -> [LogRecord] {
            // Random bodies: PostgreSQL compresses repetitive ones to nothing.
            (first..<first + 50).map { position in
                LogRecord(
                    position: position, id: .random(),
                    body: Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) }))
            }
        }
        var refusal: EventLogError?
        var stored: [LogRecord] = []
        for _ in 0..<400 where refusal == nil {
            let records = batch(from: log.head + 1)
            do {
                try log.append(records)
                stored += records
            } catch let error as EventLogError {
                refusal = error
            }
        }
        let refused = try #require(refusal, "16 MiB never filled up")
        #expect(refused.isRefusal, "\(refused)")
        #expect("\(refused)".contains("the disk is full"))
        #expect(log.head == UInt64(stored.count))
        // Space again: the log goes on from where it was, with no hole.
        try SystemCommand.run(["/usr/bin/mount", "-o", "remount,size=256m", mountPoint])
        let more = batch(from: log.head + 1)
        try log.append(more)
        stored += more
        let read = try log.makeReader().read(after: 0, through: log.head, limit: 100_000, maxBytes: 1 << 30)
        #expect(read.map(\.position) == stored.map(\.position))
        #expect(read.map(\.id) == stored.map(\.id))
        try log.close()
    }

    @Test func aDaemonStartedBeforeItsServerWaitsSayingSoAndComesUpWithIt() async throws {
        let directory = try TemporaryDirectory("pglate")
        let port = try TCPPorts.free()
        let url = "postgres://postgres:\(PostgresServer.defaultPassword)@127.0.0.1:\(port)/postgres"
        let bus = BusProcess(directory: directory.path)
        let daemon = try await bus.start(["--store", url, "--store-wait-s", "60"], waitUntilReady: false)
        defer { Task { await bus.stop(SIGKILL) } }
        try await daemon.waitForOutput("the store is not reachable yet; trying again", timeout: .seconds(20))
        let server = try PostgresServer.start(port: port)
        defer { server.stop() }
        try await BusProcess.waitUntilReady(bus.location, child: daemon, timeout: .seconds(60))
        let client = try ZeroMQBusClient(location: bus.location, options: .init(process: "test"))
        defer { client.close() }
        #expect(
            try await client.publish(OutgoingEvent(type: "bureau.bench.Happened", payload: Data())) == .committed(1))
        #expect(await bus.stop() == 0)
    }

    @Test func aWrongPasswordStopsTheDaemonAtOnceNamingTheServer() async throws {
        let server = try TestPostgres.server()
        let directory = try TemporaryDirectory("pgpassword")
        let result = try await ChildProcess.bureau(
            [
                "bus", "--data", directory.file("data"), "--store",
                server.url(database: "postgres", password: "wrong-password"), "--store-wait-s", "60",
            ], in: directory.path, name: "bus", timeout: .seconds(30))
        #expect(result.code == 1)
        #expect(result.err.contains("refused the connection: 127.0.0.1:\(server.port)"), "\(result.err)")
        #expect(!result.err.contains("wrong-password"))
    }
}
