import Bus
import BusTesting
import EventLog
import Foundation
import TestSupport
import Testing
import ZeroMQBus

#if canImport(Glibc)
    import Glibc
#endif

/// The database's machine lost: a primary with a synchronous streaming standby, the primary
/// killed -9 under load and the standby promoted. The daemon, given a store URL naming both
/// servers, reopens the store on the promoted one by itself, and every acknowledged event is
/// there exactly once at its acknowledged position. Skipped, saying why, where PostgreSQL
/// cannot be started.
@Suite(
    .disabled(if: PostgresServer.unavailable != nil, Comment(rawValue: PostgresServer.unavailable ?? "")),
    .timeLimit(.minutes(3)))
struct PostgresFailoverTests {
    @Test func losingThePrimaryUnderLoadLosesAndDoublesNothingOnThePromotedStandby() async throws {
        let primary = try PostgresServer.start(settings: PostgresServer.synchronousPrimarySettings)
        defer { primary.stop() }
        let standby = try primary.startStandby()
        defer { standby.stop() }
        // Created once the standby streams: a commit on the primary waits for it from now on.
        let database = try primary.createDatabase(prefix: "failover")
        // What the promise rests on: the standby confirms every commit before it is acknowledged.
        #expect(try primary.sql("SELECT sync_state FROM pg_stat_replication").contains("sync"))
        let url =
            "postgres://postgres:\(primary.password)@127.0.0.1:\(primary.port),127.0.0.1:\(standby.port)/\(database)"
            + "?connect_timeout=2&query_timeout=10"

        let directory = try TemporaryDirectory("pgfailover")
        let bus = BusProcess(directory: directory.path)
        let daemon = try await bus.start(["--store", url, "--store-wait-s", "60"])
        defer { Task { await bus.stop(SIGKILL) } }
        var options = ZeroMQBusClient.Options(process: "producer")
        options.publishTimeout = .seconds(60)
        let producer = try ZeroMQBusClient(location: bus.location, options: options)
        defer { producer.close() }

        let acknowledged: [EventID: UInt64]
        do {
            acknowledged = try await FailoverLoad.publish(batches: 30, perBatch: 40, on: producer) {
                primary.kill9()
                try standby.promote()
            }
        } catch {
            Issue.record("\(error)\nthe daemon said:\n\(daemon.standardError)")
            return
        }
        #expect(daemon.isRunning, "the daemon should have reopened the store, not exited: \(daemon.standardError)")
        #expect(daemon.standardError.contains("reopening it from what it holds"))

        // On the promoted server: every acknowledged event once, at its position, no gap.
        let rows = try standby.sql(
            "SELECT position || ' ' || id FROM bureau_events ORDER BY position", database: database
        ).split(separator: "\n")
        let stored = rows.map { $0.split(separator: " ") }.compactMap { parts -> (position: UInt64, id: EventID)? in
            guard parts.count == 2, let position = UInt64(parts[0]), let id = EventID(String(parts[1])) else {
                return nil
            }
            return (position, id)
        }
        #expect(stored.count == rows.count)
        FailoverLoad.expectExactlyOnce(stored, acknowledged: acknowledged)
        #expect(await bus.stop() == 0)
    }
}
