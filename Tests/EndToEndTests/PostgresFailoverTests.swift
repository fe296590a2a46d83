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

        var acknowledged: [EventID: UInt64] = [:]
        let batches = 30
        for batch in 0..<batches {
            if batch == batches / 2 {
                primary.kill9()
                try standby.promote()
            }
            let events = PostgresBusTests.events(40, tag: "batch \(batch)")
            let outcomes: [PublishOutcome]
            do {
                outcomes = try await producer.publish(events)
            } catch {
                Issue.record("batch \(batch): \(error)\nthe daemon said:\n\(daemon.standardError)")
                return
            }
            for (event, outcome) in zip(events, outcomes) {
                let position = try #require(outcome.position, "\(outcome)")
                #expect(acknowledged.updateValue(position, forKey: event.id) == nil)
            }
        }
        #expect(daemon.isRunning, "the daemon should have reopened the store, not exited: \(daemon.standardError)")
        #expect(daemon.standardError.contains("reopening it from what it holds"))

        // On the promoted server: every acknowledged event once, at its position, no gap.
        let rows = try standby.sql(
            "SELECT position || ' ' || id FROM bureau_events ORDER BY position", database: database
        ).split(separator: "\n")
        let stored = rows.map { $0.split(separator: " ") }.compactMap { parts -> (UInt64, String)? in
            guard parts.count == 2, let position = UInt64(parts[0]) else { return nil }
            return (position, String(parts[1]))
        }
        #expect(stored.map(\.0) == Array(1...UInt64(stored.count)))
        #expect(stored.count == acknowledged.count)
        let byID = Dictionary(stored.map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        for (id, position) in acknowledged {
            #expect(byID[id.description] == position)
        }
        #expect(await bus.stop() == 0)
    }
}
