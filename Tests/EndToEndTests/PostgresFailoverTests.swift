import BureauSchemas
import Bus
import BusTesting
import ConverterFeature
import EventLog
import Foundation
import Guards
import Runtime
import TestServers
import TestSupport
import Testing
import WatchlistFeature
import ZeroMQBus

#if canImport(Glibc)
    import Glibc
#endif

/// The database's machine lost: a primary with a synchronous streaming standby, the primary
/// killed -9 under load and the standby promoted. The daemon, given a store URL naming both
/// servers, reopens the store on the promoted one by itself, and every acknowledged event is
/// there exactly once at its acknowledged position; reducer hosts keeping their snapshots in
/// the store ride it out too, in the same process. Skipped, saying why, where PostgreSQL
/// cannot be started.
// Starts, kills and promotes servers, waiting for each: off the cooperative pool.
@Suite(
    .disabled(if: PostgresServer.unavailable != nil, Comment(rawValue: PostgresServer.unavailable ?? "")),
    .ownThreads, .timeLimit(.minutes(3)))
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
        let url = Self.storeURL(primary, standby, database)

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

    @Test func reducerHostsOnTheStoreRideOutThePromotionAndAnswerEveryRequestOnce() async throws {
        let primary = try PostgresServer.start(settings: PostgresServer.synchronousPrimarySettings)
        defer { primary.stop() }
        let standby = try primary.startStandby()
        defer { standby.stop() }
        let database = try primary.createDatabase(prefix: "hostfailover")
        let url = Self.storeURL(primary, standby, database)
        let directory = try TemporaryDirectory("pghostfailover")
        let bus = BusProcess(directory: directory.path)
        let daemon = try await bus.start(["--store", url, "--store-wait-s", "60"])
        defer { Task { await bus.stop(SIGKILL) } }
        // Two reducers in one process, as `bureau up` runs them, a snapshot in the store after every input.
        let hosts = try ChildProcess(
            BureauExecutable.path,
            [
                "run", "watchlist", "converter", "--data", bus.location.dataDirectory, "--store", url,
                "--snapshot-every", "1",
            ],
            directory: directory.path, name: "hosts", readiness: true)
        _ = try await hosts.waitUntilReady()
        var options = ZeroMQBusClient.Options(process: "producer")
        options.publishTimeout = .seconds(60)
        let producer = try ZeroMQBusClient(location: bus.location, options: options)
        defer { producer.close() }
        let answers = Self.answers(from: producer)

        func requests(_ tag: Int) throws -> [OutgoingEvent] {
            try (0..<3).flatMap { index in
                [
                    try OutgoingEvent(PairAddRequested(base: "EUR", quote: ["USD", "GBP", "JPY"][index])),
                    try OutgoingEvent(AmountSetRequested(value: "\(tag * 10 + index + 1)", currency: "EUR")),
                ]
            }
        }
        var sent: [OutgoingEvent] = []
        var lastRequest: UInt64 = 0
        func publish(_ events: [OutgoingEvent]) async throws {
            let outcomes = try await producer.publish(events)
            #expect(outcomes.allSatisfy { $0.position != nil }, "\(outcomes)")
            lastRequest = max(lastRequest, outcomes.compactMap(\.position).max() ?? 0)
            sent += events
        }

        // Before: answered, each input's snapshot in the primary.
        try await publish(try requests(0))
        try await Self.waitUntilAnswered(sent.map(\.id), by: answers, within: .seconds(30))
        // During: the primary is lost; the requests wait for the promoted standby.
        primary.kill9()
        let during = try requests(1)
        let publishing = Task { try await producer.publish(during) }
        try standby.promote()
        let duringOutcomes = try await publishing.value
        #expect(duringOutcomes.allSatisfy { $0.position != nil }, "\(duringOutcomes)")
        sent += during
        lastRequest = max(lastRequest, duringOutcomes.compactMap(\.position).max() ?? 0)
        // After.
        try await publish(try requests(2))
        do {
            try await Self.waitUntilAnswered(sent.map(\.id), by: answers, within: .seconds(60))
        } catch {
            Issue.record("\(error)\nthe hosts said:\n\(hosts.standardError)\nthe daemon said:\n\(daemon.standardError)")
            return
        }

        // The same process throughout: its snapshot store followed the store to the promoted server.
        #expect(hosts.isRunning, "the hosts should have ridden out the failover: \(hosts.standardError)")
        #expect(hosts.standardError.contains("connected to the store again"), "\(hosts.standardError)")
        hosts.signal(SIGTERM)
        #expect(await hosts.exitCode(within: .seconds(30)) == 0, "\(hosts.standardError)")

        // In the store: every request answered once, and snapshots saved after the promotion.
        let outputTypes = [
            PairAdded.protoMessageName, PairRejected.protoMessageName, AmountChanged.protoMessageName,
            AmountRejected.protoMessageName,
        ]
        let rows = try standby.sql(
            """
            SELECT correlation FROM bureau_events
            WHERE type IN (\(outputTypes.map { "'\($0)'" }.joined(separator: ",")))
            """, database: database
        ).split(separator: "\n").compactMap { EventID(String($0)) }
        var counts: [EventID: Int] = [:]
        for id in rows { counts[id, default: 0] += 1 }
        #expect(counts == Dictionary(uniqueKeysWithValues: sent.map { ($0.id, 1) }))
        let snapshots = try standby.sql(
            "SELECT module || ' ' || position FROM bureau_snapshots ORDER BY module", database: database
        ).split(separator: "\n").map { $0.split(separator: " ") }
        #expect(snapshots.map { String($0[0]) } == ["converter", "watchlist"])
        for row in snapshots {
            #expect((UInt64(row[1]) ?? 0) >= lastRequest, "\(row): saved after the last request")
        }
        #expect(await bus.stop() == 0)
    }

    /// The booking adapter keeps its checkpoint in the store too: across the promotion it books
    /// on, in the same process, each accepted reservation confirmed once, and its checkpoint is
    /// saved on the promoted server.
    @Test func theBookingAdapterOnTheStoreRidesOutThePromotionAndConfirmsEachReservationOnce() async throws {
        let primary = try PostgresServer.start(settings: PostgresServer.synchronousPrimarySettings)
        defer { primary.stop() }
        let standby = try primary.startStandby()
        defer { standby.stop() }
        let database = try primary.createDatabase(prefix: "adapterfailover")
        let url = Self.storeURL(primary, standby, database)
        let directory = try TemporaryDirectory("pgadapterfailover")
        let bus = BusProcess(directory: directory.path)
        let daemon = try await bus.start(["--store", url, "--store-wait-s", "60"])
        defer { Task { await bus.stop(SIGKILL) } }
        let server = try ChildProcess(
            BureauExecutable.path, ["serve", "booking", "--port", "0"], directory: directory.path,
            name: "booking-server", readiness: true)
        defer { server.signal(SIGKILL) }
        let bookingURL = try await server.waitUntilReady()
        let adapter = try ChildProcess(
            BureauExecutable.path,
            [
                "run", "booking-adapter", "--data", bus.location.dataDirectory, "--store", url, "--set",
                "booking-url=\(bookingURL)",
            ],
            directory: directory.path, name: "adapter", readiness: true)
        defer { adapter.signal(SIGKILL) }
        _ = try await adapter.waitUntilReady()
        var options = ZeroMQBusClient.Options(process: "reservations")
        options.publishTimeout = .seconds(60)
        let producer = try ZeroMQBusClient(location: bus.location, options: options)
        defer { producer.close() }

        var reservations: [String] = []
        var lastAccepted: UInt64 = 0
        func accept(_ tag: String) throws -> [(String, OutgoingEvent)] {
            try (0..<3).map { index in
                let accepted = ReservationFixtures.accepted("r-\(tag)-\(index)")
                return (accepted.reservationID, try Emitted(accepted).outgoing(id: .random(), module: "reservations"))
            }
        }
        func publish(_ events: [(String, OutgoingEvent)]) async throws {
            let outcomes = try await producer.publish(events.map(\.1))
            #expect(outcomes.allSatisfy { $0.position != nil }, "\(outcomes)")
            lastAccepted = max(lastAccepted, outcomes.compactMap(\.position).max() ?? 0)
            reservations += events.map(\.0)
        }
        let confirmations = EventFilter(prefixes: [Bureau_Booking_ReservationConfirmed.protoMessageName])

        // Before: booked, the checkpoint in the primary.
        try await publish(try accept("before"))
        _ = try await producer.collect(confirmations, count: 3)
        // During: the primary is lost while reservations come in.
        primary.kill9()
        let during = try accept("during")
        let publishing = Task { try await producer.publish(during.map(\.1)) }
        try standby.promote()
        let duringOutcomes = try await publishing.value
        #expect(duringOutcomes.allSatisfy { $0.position != nil }, "\(duringOutcomes)")
        lastAccepted = max(lastAccepted, duringOutcomes.compactMap(\.position).max() ?? 0)
        reservations += during.map(\.0)
        // After.
        try await publish(try accept("after"))
        let confirmed = try await producer.collect(confirmations, count: reservations.count, timeout: .seconds(60))
        let booked = try confirmed.compactMap {
            try $0.payload(as: Bureau_Booking_ReservationConfirmed.self)?.reservationID
        }
        guard booked.count == reservations.count else {
            let said = "the adapter said:\n\(adapter.standardError)\nthe daemon said:\n\(daemon.standardError)"
            Issue.record("\(booked.count) of \(reservations.count) reservations confirmed\n\(said)")
            return
        }
        #expect(Set(booked) == Set(reservations))

        // The same process throughout: its checkpoint store followed the store to the promoted server.
        #expect(adapter.isRunning, "the adapter should have ridden out the failover: \(adapter.standardError)")
        // Its checkpoint store connects again (to save what it could not while the store was
        // away, tried again without further work, or a newer one).
        try await adapter.waitForOutput("connected to the store again", timeout: .seconds(30))
        adapter.signal(SIGTERM)
        #expect(await adapter.exitCode(within: .seconds(30)) == 0, "\(adapter.standardError)")

        // In the store: each reservation confirmed once; the checkpoint saved after the promotion.
        let rows = try standby.sql(
            "SELECT count(*) FROM bureau_events WHERE type = '\(Bureau_Booking_ReservationConfirmed.protoMessageName)'",
            database: database
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(rows == "\(reservations.count)")
        let checkpoint = try standby.sql(
            "SELECT position FROM bureau_snapshots WHERE module = 'booking'", database: database
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect((UInt64(checkpoint) ?? 0) >= lastAccepted, "the checkpoint \(checkpoint) is after the last reservation")
        #expect(await bus.stop() == 0)
    }

    /// The rates adapter keeps its last fixing in the store: across the promotion it goes on
    /// polling and publishing, in the same process, each fixing once, and saves its snapshot on
    /// the promoted server again (one of a fixing published after the promotion).
    @Test func theRatesAdapterOnTheStoreRidesOutThePromotionAndGoesOnPublishing() async throws {
        let primary = try PostgresServer.start(settings: PostgresServer.synchronousPrimarySettings)
        defer { primary.stop() }
        let standby = try primary.startStandby()
        defer { standby.stop() }
        let database = try primary.createDatabase(prefix: "ratesfailover")
        let url = Self.storeURL(primary, standby, database)
        let directory = try TemporaryDirectory("pgratesfailover")
        let bus = BusProcess(directory: directory.path)
        let daemon = try await bus.start(["--store", url, "--store-wait-s", "60"])
        defer { Task { await bus.stop(SIGKILL) } }
        // Five ECB days a second: a new fixing every few polls, a year of them in 73 s (the
        // server starts over at the start of its history after its last day).
        let server = try ChildProcess(
            BureauExecutable.path, ["serve", "rates", "--port", "0", "--pace", "5"], directory: directory.path,
            name: "rates-server", readiness: true)
        defer { server.signal(SIGKILL) }
        let ratesURL = try await server.waitUntilReady() + "/stats/eurofxref/eurofxref-daily.xml"
        let client = try ZeroMQBusClient(location: bus.location, options: .init(process: "observer"))
        defer { client.close() }
        let published = EventCollector(client, EventFilter(prefixes: [Bureau_Rates_RatesPublished.protoMessageName]))
        let adapter = try ChildProcess(
            BureauExecutable.path,
            [
                "run", "rates-adapter", "--data", bus.location.dataDirectory, "--store", url, "--set",
                "rates-url=\(ratesURL)", "--set", "poll-ms=100",
            ],
            directory: directory.path, name: "adapter", readiness: true)
        defer { adapter.signal(SIGKILL) }
        _ = try await adapter.waitUntilReady()
        func fixings() -> [String] {
            published.events.compactMap { try? $0.payload(as: Bureau_Rates_RatesPublished.self)?.asOf }
        }

        // Before: two fixings published, the snapshot in the primary.
        let before = try await published.wait(until: .now + .seconds(60)) { $0.count >= 2 }
        try #require(before.count >= 2, "fixings published before the failover: \(adapter.standardError)")
        primary.kill9()
        try standby.promote()
        let beforePromotion = published.events.count
        // After: more fixings, published by the same process, which connected to the store again.
        let after = try await published.wait(until: .now + .seconds(60)) { $0.count >= beforePromotion + 3 }
        guard after.count >= beforePromotion + 3 else {
            let said = "the adapter said:\n\(adapter.standardError)\nthe daemon said:\n\(daemon.standardError)"
            Issue.record("\(after.count - beforePromotion) fixings published after the promotion\n\(said)")
            return
        }
        #expect(adapter.isRunning, "the adapter should have ridden out the failover: \(adapter.standardError)")
        try await adapter.waitForOutput("connected to the store again", timeout: .seconds(30))
        let dates = fixings()
        #expect(Set(dates).count == dates.count, "each fixing once: \(dates)")
        // In the promoted store, while the adapter runs on: the snapshot of a fixing published
        // after the promotion. The store tells no one when it is written: asked every 100 ms.
        var snapshot = ""
        do {
            try await PrometheusServer.until(timeout: .seconds(60), what: "a snapshot of a fixing after the promotion")
            {
                snapshot = try standby.sql(
                    "SELECT encode(state, 'escape') FROM bureau_snapshots WHERE module = 'rates-adapter'",
                    database: database)
                // Those published after the promotion so far: the adapter publishes on meanwhile.
                return fixings().dropFirst(beforePromotion).contains { snapshot.contains("\"asOf\":\"\($0)\"") }
            }
        } catch {
            Issue.record(
                "\(error); the snapshot: \(snapshot.prefix(300))\nthe adapter said:\n\(adapter.standardError)")
        }
        adapter.signal(SIGTERM)
        #expect(await adapter.exitCode(within: .seconds(30)) == 0, "\(adapter.standardError)")
        #expect(await bus.stop() == 0)
    }

    /// The store's URL with both servers, the primary first, as a failover manager would give it.
    static func storeURL(_ primary: PostgresServer, _ standby: PostgresServer, _ database: String) -> String {
        "postgres://postgres:\(primary.password)@127.0.0.1:\(primary.port),127.0.0.1:\(standby.port)/\(database)"
            + "?connect_timeout=2&query_timeout=10"
    }

    /// The answers of the watchlist and the converter, as a subscriber from the start sees them
    /// (through the promotion too).
    static func answers(from client: any EventBus) -> EventCollector {
        EventCollector(client, .all, after: 0) { ["watchlist", "converter"].contains($0.producerModule) }
    }

    /// Returns once every one of `ids` is among the correlations of the `answers` kept; throws,
    /// saying how many are not, after `timeout`.
    static func waitUntilAnswered(_ ids: [EventID], by answers: EventCollector, within timeout: Duration) async throws {
        let wanted = Set(ids)
        let kept = try await answers.wait(until: .now + timeout) { wanted.isSubset(of: $0.map(\.correlation)) }
        let missing = wanted.subtracting(kept.map(\.correlation))
        guard missing.isEmpty else {
            throw TestSupportError("\(missing.count) of \(ids.count) requests not answered within \(timeout)")
        }
    }
}
