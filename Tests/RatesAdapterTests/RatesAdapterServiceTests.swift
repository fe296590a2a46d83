import BureauSchemas
import Bus
import BusTesting
import EventLog
import FaultInjection
import Foundation
import Guards
import InMemoryStores
import RatesServer
import Runtime
import ServiceLifecycle
import TestServers
import TestSupport
import Testing
import ZeroMQBus

@testable import RatesAdapter

/// The rates adapter at the bus: on the in-memory twin, and also on a daemon in the process
/// for the tests that take a ``BusTier``.
@Suite(.timeLimit(.minutes(2)))
struct RatesAdapterServiceTests {
    static func document(_ asOf: String, usd: String) -> Data {
        Data(
            "<gesmes:Envelope xmlns:gesmes=\"g\"><Cube><Cube time='\(asOf)'><Cube currency='USD' rate='\(usd)'/></Cube></Cube></gesmes:Envelope>"
                .utf8)
    }

    /// The bundled ECB history, unpacked and parsed on a thread of its own: a second of a debug
    /// build's work, which on the cooperative pool would hold up every test queued behind it.
    static func bundledHistory() async throws -> ECBHistory {
        try await OwnThread.run(name: "test-ecb") { try ECBHistory.bundled() }
    }

    /// Runs `body` on a fresh deployment of `tier` (the in-memory twin unless a test runs live
    /// too), and stops it after.
    static func onBus<T: Sendable>(
        _ tier: BusTier = .inMemory, _ body: (TestDeployment) async throws -> T
    ) async throws -> T {
        try await tier.withDeployment(logger: TestLogging.logger("deployment"), body)
    }

    /// Runs the adapter on `deployment`'s bus until `body` returns; `body` is given an observer's
    /// connection.
    static func withAdapter<T>(
        source: any RatesSource, on deployment: TestDeployment,
        snapshots: any SnapshotStore = InMemorySnapshotStore(),
        configure: (inout RatesAdapterService.Configuration) -> Void = { _ in },
        _ body: (any EventBus) async throws -> T
    ) async throws -> T {
        let client = try deployment.connect("rates")
        var configuration = RatesAdapterService.Configuration()
        configuration.interval = .milliseconds(30)
        configuration.backoff = Backoff(
            initial: .milliseconds(20), multiplier: 2, maximum: .milliseconds(100), jitter: 0)
        configure(&configuration)
        let service = RatesAdapterService(
            source: source, client: client, snapshots: snapshots, configuration: configuration,
            logger: TestLogging.logger("rates"))
        let group = ServiceGroup(services: [service], logger: TestLogging.logger("group"))
        let task = Task { try await group.run() }
        let observer = try deployment.connect("observer")
        let result = try await body(observer)
        await group.triggerGracefulShutdown()
        try await task.value
        observer.close()
        client.close()
        return result
    }

    @Test(arguments: BusTier.allCases)
    func aChangedFixingIsPublishedOnceWithAnIDFromTheSourceAndDate(tier: BusTier) async throws {
        try await Self.onBus(tier) { deployment in
            let source = ScriptedRatesSource(
                name: "test-source",
                steps: [
                    .document(Self.document("2026-10-29", usd: "1.11")),
                    .document(Self.document("2026-10-29", usd: "1.11")),
                    .document(Self.document("2026-10-30", usd: "1.12")),
                ])
            let published = try await Self.withAdapter(source: source, on: deployment) { observer in
                try await observer.collect(.types([Bureau_Rates_RatesPublished.protoMessageName]), count: 2)
            }
            try #require(published.count == 2)
            let payloads = try published.map { try #require(try $0.payload(as: Bureau_Rates_RatesPublished.self)) }
            #expect(payloads.map(\.asOf) == ["2026-10-29", "2026-10-30"])
            #expect(payloads.first?.rates.first?.rate == "1.11")
            #expect(payloads.allSatisfy { $0.source == "test-source" && $0.base == "EUR" })
            #expect(published[1].id == RatesAdapterService.fixingID(source: "test-source", asOf: "2026-10-30"))
            // Polled again and again; published no more.
            #expect(await source.fetches >= 3)
        }
    }

    @Test func aRestartDoesNotPublishTheSameFixingAgain() async throws {
        try await Self.onBus { deployment in
            let document = Self.document("2026-10-30", usd: "1.12")
            for _ in 0..<2 {
                // A fresh snapshot store each time: the adapter finds what it published in the log.
                _ = try await Self.withAdapter(
                    source: ScriptedRatesSource(name: "s", steps: [.document(document)]), on: deployment
                ) {
                    observer in
                    try await observer.collect(.types([Bureau_Rates_RatesPublished.protoMessageName]), count: 1)
                }
            }
            let observer = try deployment.connect("observer")
            let all = try await observer.collect(
                .types([Bureau_Rates_RatesPublished.protoMessageName]), count: 2, timeout: .milliseconds(500))
            #expect(all.count == 1)
        }
    }

    /// Without a bus the adapter never finds where it left off; a graceful shutdown (SIGTERM)
    /// must still stop it, promptly.
    @Test func aShutdownStopsTheAdapterEvenBeforeTheBusAnswers() async throws {
        // A data directory no daemon serves: a client of its own, never answered.
        let directory = try TemporaryDirectory("nobus")
        let client = try ZeroMQBusClient(
            location: BusLocation(dataDirectory: directory.file("data")), options: .init(process: "rates"),
            logger: TestLogging.logger("rates"))
        let service = RatesAdapterService(
            source: ScriptedRatesSource(steps: [.document(Self.document("2026-10-30", usd: "1"))]), client: client,
            snapshots: InMemorySnapshotStore(), configuration: .init(), logger: TestLogging.logger("rates"))
        let group = ServiceGroup(services: [service], logger: TestLogging.logger("group"))
        let task = Task { try await group.run() }
        await group.triggerGracefulShutdown()
        // Generous for a loaded machine: what this catches is an adapter that never stops.
        let stopped: Void? = await Timeout.result(within: .seconds(30)) { _ = try? await task.value }
        #expect(stopped != nil, "still running 30 s after a graceful shutdown")
        task.cancel()
        client.close()
    }

    static let failures = EventFilter.types([
        Bureau_Rates_RatesFetchFailed.protoMessageName, Bureau_System_ErrorRaised.protoMessageName,
    ])

    @Test func aPollThatOutlivesItsTimeoutIsCancelledAndReported() async throws {
        try await Self.onBus { deployment in
            let source = ScriptedRatesSource(
                name: "slow",
                steps: [
                    .slow(Self.document("2026-10-30", usd: "1"), .seconds(10)),
                    .document(Self.document("2026-10-30", usd: "1")),
                ])
            let events = try await Self.withAdapter(
                source: source, on: deployment, configure: { $0.timeout = .milliseconds(200) }
            ) {
                observer in
                try await observer.collect(
                    .types([
                        Bureau_Rates_RatesFetchFailed.protoMessageName, Bureau_Rates_RatesPublished.protoMessageName,
                    ]),
                    count: 2)
            }
            let failed = try #require(try events.first?.payload(as: Bureau_Rates_RatesFetchFailed.self))
            #expect(failed.reason == "timed out after 200 ms" && failed.attempt == 1)
            #expect(events.last?.type == Bureau_Rates_RatesPublished.protoMessageName)
            // The fetch given up on is cancelled, once (maybe after the adapter went on)
            let cancelled: Void? = await Timeout.result(within: .seconds(10)) {
                await source.cancellations.wait(until: 1)
            }
            #expect(cancelled != nil, "the fetch that timed out was not cancelled")
            #expect(source.cancellations.value == 1)
        }
    }

    /// An answer slower than the interval but within the timeout is waited for: the next poll
    /// does not cancel it (a newer poll would only ask the same question).
    @Test func aSourceSlowerThanTheIntervalStillGetsThrough() async throws {
        try await Self.onBus { deployment in
            let source = ScriptedRatesSource(
                name: "slow", steps: [.slow(Self.document("2026-10-30", usd: "1"), .milliseconds(150))])
            let (published, cancelled) = try await Self.withAdapter(
                source: source, on: deployment, configure: { $0.timeout = .seconds(10) }
            ) { observer in
                let published = try await observer.collect(
                    .types([Bureau_Rates_RatesPublished.protoMessageName]), count: 1)
                // Counted before the shutdown, which cancels whatever poll is in flight then.
                return (published, source.cancellations.value)
            }
            #expect(published.count == 1)
            #expect(cancelled == 0, "no poll was cancelled by the next one")
        }
    }

    /// A real server on loopback that takes the connection and never answers: reported as a
    /// timeout, with ErrorRaised, once per timeout — never cancelled silently by the next poll.
    @Test func aSourceThatHangsIsReportedOncePerTimeout() async throws {
        try await Self.onBus { deployment in
            let hanging = try HangingServer()
            defer { hanging.stop() }
            let source = HTTPRatesSource(url: "http://127.0.0.1:\(hanging.port)/daily.xml", timeout: .milliseconds(300))
            let started = ContinuousClock.now
            let events = try await Self.withAdapter(
                source: source, on: deployment, configure: { $0.timeout = .milliseconds(300) }
            ) {
                observer in
                try await observer.collect(Self.failures, count: 4)
            }
            let took = ContinuousClock.now - started
            let failures = try events.compactMap { try $0.payload(as: Bureau_Rates_RatesFetchFailed.self) }
            let raised = try events.compactMap { try $0.payload(as: Bureau_System_ErrorRaised.self) }
            #expect(failures.map(\.reason) == ["timed out after 300 ms", "timed out after 300 ms"])
            #expect(failures.map(\.attempt) == [1, 2])
            #expect(
                raised.count == 2
                    && raised.allSatisfy { $0.code == "fetch-failed" && $0.message.hasSuffix("timed out after 300 ms") }
            )
            #expect(took >= .milliseconds(600), "two reports take two timeouts, not two polls: \(took)")
        }
    }

    /// A source whose port nothing listens on: each poll is reported as refused as soon as the
    /// connection is, and the next attempt follows its backoff. With a timeout of a minute and
    /// the test's wait of 20 s, a refusal taken for a timeout (or told only at the timeout)
    /// could not show two attempts.
    @Test func aRefusedConnectionIsReportedAsRefusedAtEveryAttemptNotAsATimeout() async throws {
        try await Self.onBus { deployment in
            let port = try TCPPorts.free()
            let source = HTTPRatesSource(url: "http://127.0.0.1:\(port)/daily.xml", timeout: .seconds(60))
            let events = try await Self.withAdapter(
                source: source, on: deployment, configure: { $0.timeout = .seconds(60) }
            ) {
                observer in
                try await observer.collect(Self.failures, count: 4, timeout: .seconds(20))
            }
            let failures = try events.compactMap { try $0.payload(as: Bureau_Rates_RatesFetchFailed.self) }
            let raised = try events.compactMap { try $0.payload(as: Bureau_System_ErrorRaised.self) }
            let refused = "connection refused: nothing listens at 127.0.0.1:\(port)"
            #expect(failures.map(\.reason) == [refused, refused], "\(failures.map(\.reason))")
            #expect(failures.map(\.attempt) == [1, 2])
            #expect(failures.map(\.nextRetryMs) == [20, 40], "the backoff, not the timeout, paces the attempts")
            #expect(
                raised.count == 2 && raised.allSatisfy { $0.code == "fetch-failed" && $0.message.hasSuffix(refused) })
        }
    }

    /// What the bus refuses is not published: a source whose name makes RatesPublished larger
    /// than an envelope may be. The adapter reports it (with the name cut short) and tries again.
    @Test(arguments: BusTier.allCases)
    func aFixingTheBusRefusesIsReportedNotTakenAsPublished(tier: BusTier) async throws {
        try await Self.onBus(tier) { deployment in
            let name = "http://example.com/" + String(repeating: "x", count: (1 << 20) + 10)
            let source = ScriptedRatesSource(name: name, steps: [.document(Self.document("2026-10-30", usd: "1.1"))])
            let events = try await Self.withAdapter(source: source, on: deployment) { observer in
                try await observer.collect(Self.failures, count: 4)
            }
            let failures = try events.compactMap { try $0.payload(as: Bureau_Rates_RatesFetchFailed.self) }
            #expect(failures.map(\.attempt) == [1, 2], "refused, then refused again: nothing was taken as published")
            #expect(failures.allSatisfy { $0.reason.hasPrefix("the bus refused RatesPublished of 2026-10-30: ") })
            #expect(failures.allSatisfy { $0.source.utf8.count <= EventText.defaultLimit })
            let raised = try events.compactMap { try $0.payload(as: Bureau_System_ErrorRaised.self) }
            #expect(raised.allSatisfy { $0.code == "publish-refused" })
            // The adapter has stopped (withAdapter waits for it): what it published is in the log.
            let observer = try deployment.connect("observer")
            let published = try await observer.eventsUpToHead(.types([Bureau_Rates_RatesPublished.protoMessageName]))
            #expect(published.isEmpty)
            observer.close()
        }
    }

    @Test func aMalformedDocumentIsAFailureThatNamesTheProblem() async throws {
        try await Self.onBus { deployment in
            let broken = Data(
                "<gesmes:Envelope><Cube><Cube time='2026-10-30'><Cube currency='USD'/></Cube></Cube></gesmes:Envelope>"
                    .utf8
            )
            let events = try await Self.withAdapter(
                source: ScriptedRatesSource(name: "b", steps: [.document(broken)]), on: deployment
            ) {
                observer in
                try await observer.collect(
                    .types([Bureau_Rates_RatesFetchFailed.protoMessageName, Bureau_System_ErrorRaised.protoMessageName]
                    ),
                    count: 2)
            }
            let failed = try #require(try events.first?.payload(as: Bureau_Rates_RatesFetchFailed.self))
            #expect(failed.reason == "malformed document: <Cube> at line 1 is missing attribute 'rate'")
            let raised = try #require(try events.last?.payload(as: Bureau_System_ErrorRaised.self))
            #expect(raised.code == "malformed-document" && raised.module == "rates-adapter")
        }
    }

    /// Against the real embedded server on loopback: 500 for a while, then the rates.
    @Test func aServerFailingForAWhileShowsGrowingCappedBackoffThenRecovery() async throws {
        try await Self.onBus { deployment in
            var configuration = RatesServer.Configuration()
            configuration.port = 0
            configuration.failFirst = 6
            configuration.start = "2026-10-30"
            configuration.daysPerSecond = 0
            let rates = try RatesServer(configuration: configuration, history: try await Self.bundledHistory())
            let server = try await InProcessServer {
                rates.application(logger: TestLogging.logger("ecb"), onListening: $0)
            }
            let source = HTTPRatesSource(
                url: "http://127.0.0.1:\(server.port)\(RatesServer.dailyPath)", timeout: .seconds(30))
            // A long interval and timeout: no poll is superseded or timed out however slowly this
            // machine answers (the first request to a server just started once took over 5 s
            // while the other suites ran).
            let events = try await Self.withAdapter(
                source: source, on: deployment,
                configure: {
                    $0.interval = .seconds(10)
                    $0.timeout = .seconds(30)
                }
            ) {
                observer in
                try await observer.collect(
                    .types([
                        Bureau_Rates_RatesFetchFailed.protoMessageName, Bureau_Rates_RatesPublished.protoMessageName,
                    ]),
                    count: 7)
            }
            await server.stop()
            let failures = try events.compactMap { try $0.payload(as: Bureau_Rates_RatesFetchFailed.self) }
            #expect(failures.map(\.attempt) == [1, 2, 3, 4, 5, 6])
            #expect(failures.map(\.nextRetryMs) == [20, 40, 80, 100, 100, 100], "doubling, capped at 100 ms")
            #expect(
                failures.allSatisfy { $0.httpStatus == 500 && $0.reason == "HTTP 500" },
                "\(failures.map { "attempt \($0.attempt): \($0.httpStatus) \($0.reason)" })")
            let recovered = try #require(try events.last?.payload(as: Bureau_Rates_RatesPublished.self))
            #expect(recovered.asOf == "2026-10-30")
            #expect(recovered.rates.first { $0.currency == "USD" }?.rate == "1.1172")
        }
    }

    @Test func snapshotSavesThatFailWhileTheStoreIsAwayAreOwedAndMadeOnceItIsBack() async throws {
        // Given a store that fails the adapter's next two saves
        try await Self.onBus { deployment in
            let store = FailingSnapshotStore()
            store.failSaves(2)
            let source = ScriptedRatesSource(
                name: "s",
                steps: [
                    .document(Self.document("2026-10-29", usd: "1.11")),
                    .document(Self.document("2026-10-30", usd: "1.12")),
                ])
            // When it publishes two fixings, then polls the second again
            let outcomes = try await Self.withAdapter(source: source, on: deployment, snapshots: store) { observer in
                let published = try await observer.collect(
                    .types([Bureau_Rates_RatesPublished.protoMessageName]), count: 2)
                #expect(published.count == 2)
                var outcomes: [Bool] = []
                for await attempt in store.attempts {
                    outcomes.append(attempt.saved)
                    if attempt.saved { break }
                }
                return outcomes
            }
            // Then both failed saves were logged and gone past, the adapter went on publishing, and
            // the save owed was made at the next poll: the snapshot holds the last fixing
            #expect(outcomes == [false, false, true])
            let saved = try #require(
                store.load(RatesAdapterService.State.self, module: RatesAdapterService.module, stateVersion: 1) { _ in }
            )
            #expect(saved.state.asOf == "2026-10-30")
        }
    }
}
