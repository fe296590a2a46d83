import BureauSchemas
import Bus
import BusTesting
import EventLog
import FaultInjection
import FeatureTestSupport
import Foundation
import Guards
import InMemoryBus
import InMemoryStores
import Logging
import Runtime
import ServiceLifecycle
import TestSupport
import Testing
import WatchlistFeature
import ZeroMQBus

/// A bus of either tier (the twin or a daemon in the process), with what a host test reads back: the log's records, a directory.
final class BusUnderTest: @unchecked Sendable {
    private let daemon: TestBus?
    private let memory: InMemoryBus?
    /// Where snapshot files may go.
    let directory: TemporaryDirectory

    init(_ tier: BusTier) async throws {
        directory = try TemporaryDirectory("host")
        switch tier {
        case .inMemory:
            daemon = nil
            memory = InMemoryBus(process: "test")
        case .live:
            daemon = try await TestBus()
            memory = nil
        }
    }

    func client(_ process: String = "test", upcasting: EventUpcasting = .none) throws -> any EventBus {
        if let daemon { return try daemon.client(process) { $0.upcasting = upcasting } }
        if let memory { return memory.connection(process: process, upcasting: upcasting) }
        throw TestSupportError("no bus")
    }

    /// The log's directory, for a bus over a daemon.
    func logDirectory() throws -> String {
        guard let daemon else { throw TestSupportError("a bus in memory has no log files") }
        return daemon.location.logDirectory
    }

    /// Every record in the log, in order.
    func records() throws -> [LogRecord] {
        if let memory { return memory.records }
        guard let daemon else { return [] }
        let cursor = try LogCursor(directory: daemon.location.logDirectory, after: 0)
        var records: [LogRecord] = []
        while let record = try cursor.next() { records.append(record) }
        return records
    }
}

/// A reducer host running in the test process against a bus.
final class HostHarness: @unchecked Sendable {
    let bus: BusUnderTest
    let snapshots: any SnapshotStore
    let statistics = HostStatistics()
    private var task: Task<Void, any Error>?
    private var client: (any EventBus)?

    init(bus: BusUnderTest, snapshots: any SnapshotStore) {
        self.bus = bus
        self.snapshots = snapshots
    }

    func start(
        snapshotEvery: Int = 10_000, snapshotRetry: Backoff? = nil, upcasting: EventUpcasting = .none
    ) throws -> HostStatistics {
        let client = try bus.client("host", upcasting: upcasting)
        self.client = client
        let statistics = HostStatistics()
        var options = ReducerHostOptions()
        options.snapshotEvery = snapshotEvery
        if let snapshotRetry { options.snapshotRetry = snapshotRetry }
        let host = ReducerHost(
            reducer: WatchlistReducer(), client: client, snapshots: snapshots, options: options,
            logger: TestLogging.logger("host"), statistics: statistics)
        let group = ServiceGroup(services: [host], logger: TestLogging.logger("group"))
        task = Task { try await group.run() }
        groupHandle = group
        return statistics
    }

    private var groupHandle: ServiceGroup?

    /// Stops the host as SIGTERM would: it finishes, publishes what it owes and snapshots.
    func stop() async throws {
        await groupHandle?.triggerGracefulShutdown()
        try await task?.value
        client?.close()
    }

    /// Stops the host as a crash would: no final snapshot, nothing more published.
    func crash() async {
        task?.cancel()
        _ = try? await task?.value
        client?.close()
    }
}

@Suite(.timeLimit(.minutes(2)))
struct ReducerHostTests {
    static func request(_ base: String, _ quote: String) throws -> OutgoingEvent {
        try OutgoingEvent(PairAddRequested(base: base, quote: quote))
    }

    /// The watchlist answers in the log, by the request they answer.
    static func answers(in bus: BusUnderTest) throws -> [EventID: [String]] {
        var answers: [EventID: [String]] = [:]
        for record in try bus.records() {
            let event = try StoredEvent(envelopeBytes: record.body)
            if event.producerModule == "watchlist" { answers[event.correlation, default: []].append(event.type) }
        }
        return answers
    }

    @Test(arguments: BusTier.allCases)
    func liveRequestsGetTheirAnswers(tier: BusTier) async throws {
        let bus = try await BusUnderTest(tier)
        let harness = HostHarness(bus: bus, snapshots: InMemorySnapshotStore())
        let statistics = try harness.start()
        await statistics.waitUntilCaughtUp()
        let client = try bus.client()
        _ = try await client.publish(try OutgoingEvent(rates(["USD": "1.1", "GBP": "0.8"])))
        let requests = try [Self.request("EUR", "USD"), Self.request("EUR", "USD"), Self.request("EUR", "XXX")]
        let positions = try await client.publish(requests).compactMap(\.position)
        await statistics.waitUntilApplied(positions.last ?? 0)
        try await harness.stop()
        let answers = try Self.answers(in: bus)
        #expect(answers[requests[0].id] == ["bureau.watchlist.PairAdded"])
        #expect(answers[requests[1].id] == ["bureau.watchlist.PairRejected"])
        #expect(answers[requests[2].id] == ["bureau.watchlist.PairRejected"])
    }

    /// Reads an alert request as a pair request, and fails on every one: an upcaster's bug.
    struct FailingUpcaster: Upcaster {
        struct Broken: Error, CustomStringConvertible { var description: String { "the old quote is not a currency" } }
        var change: String { "a test's broken upcaster" }
        func upcast(_ old: Bureau_Alerts_AlertSetRequested, of event: StoredEvent) throws -> PairAddRequested {
            throw Broken()
        }
    }

    @Test(arguments: BusTier.allCases)
    func anInputWhoseUpcasterFailsIsReportedNamingThePositionAndTheUpcasterAndPassedOver(tier: BusTier) async throws {
        let bus = try await BusUnderTest(tier)
        let harness = HostHarness(bus: bus, snapshots: InMemorySnapshotStore())
        let upcasting = try EventUpcasting([FailingUpcaster()], readTypes: [PairAddRequested.protoMessageName])
        let statistics = try harness.start(upcasting: upcasting)
        await statistics.waitUntilCaughtUp()
        let client = try bus.client()
        _ = try await client.publish(try OutgoingEvent(rates(["USD": "1.1"])))
        let old = try OutgoingEvent(Bureau_Alerts_AlertSetRequested())
        let after = try Self.request("EUR", "USD")
        let positions = try await client.publish([old, after]).compactMap(\.position)
        await statistics.waitUntilApplied(positions.last ?? 0)
        try await harness.stop()
        let answers = try Self.answers(in: bus)
        #expect(answers[old.id] == ["bureau.system.ErrorRaised"])
        #expect(answers[after.id] == ["bureau.watchlist.PairAdded"], "the host went on")
        let raised = try bus.records().map { try StoredEvent(envelopeBytes: $0.body) }
            .first { $0.correlation == old.id && $0.type == Bureau_System_ErrorRaised.protoMessageName }
        let message = try #require(try raised?.payload(as: Bureau_System_ErrorRaised.self)).message
        #expect(message.contains("position \(positions[0])"), "\(message)")
        #expect(message.contains("FailingUpcaster failed: the old quote is not a currency"), "\(message)")
    }

    @Test(arguments: BusTier.allCases)
    func aRestartResumesFromTheSnapshotNotFromTheStart(tier: BusTier) async throws {
        let bus = try await BusUnderTest(tier)
        let snapshots = InMemorySnapshotStore()
        let client = try bus.client()
        _ = try await client.publish(try OutgoingEvent(rates(["USD": "1.1", "GBP": "0.8", "JPY": "170"])))
        let first = HostHarness(bus: bus, snapshots: snapshots)
        let before = try first.start()
        let positions = try await client.publish([try Self.request("EUR", "USD")]).compactMap(\.position)
        await before.waitUntilApplied(positions[0])
        try await first.stop()
        let saved = snapshots.load(
            WatchlistReducer.State.self, module: "watchlist", stateVersion: 1, rejected: { _ in })
        // The snapshot covers the request (and its answer, if the host saw it before stopping).
        let savedPosition = try #require(saved?.position)
        #expect(savedPosition >= positions[0])

        let second = HostHarness(bus: bus, snapshots: snapshots)
        let after = try second.start()
        await after.waitUntilCaughtUp()
        #expect(after.startedFrom == savedPosition)
        let next = try await client.publish([try Self.request("EUR", "GBP")]).compactMap(\.position)
        await after.waitUntilApplied(next[0])
        try await second.stop()
        #expect(
            snapshots.load(WatchlistReducer.State.self, module: "watchlist", stateVersion: 1, rejected: { _ in })?.state
                .pairs.map(\.quote) == ["USD", "GBP"])
    }

    @Test(arguments: BusTier.allCases)
    func inputsCommittedWhileNoHostRanAreAnsweredOnceWhenOneStarts(tier: BusTier) async throws {
        let bus = try await BusUnderTest(tier)
        let snapshots = InMemorySnapshotStore()
        let client = try bus.client()
        _ = try await client.publish(try OutgoingEvent(rates(["USD": "1.1", "GBP": "0.8"])))
        let requests = try (0..<20).map { index in try Self.request("EUR", index % 2 == 0 ? "USD" : "GBP") }
        let positions = try await client.publish(requests).compactMap(\.position)

        let harness = HostHarness(bus: bus, snapshots: snapshots)
        let statistics = try harness.start()
        await statistics.waitUntilCaughtUp()
        #expect(statistics.republished == 20)
        try await harness.stop()

        // A host that lost its snapshot computes every answer again, finds them in the log and
        // publishes none of them twice.
        let fresh = HostHarness(bus: bus, snapshots: InMemorySnapshotStore())
        let again = try fresh.start()
        await again.waitUntilCaughtUp()
        #expect(again.republished == 0)
        try await fresh.stop()
        let answers = try Self.answers(in: bus)
        #expect(requests.allSatisfy { answers[$0.id]?.count == 1 })
        #expect(positions.count == 20)
    }

    @Test(arguments: BusTier.allCases)
    func outputsMissingAfterACrashArePublishedAndThoseInTheLogAreNot(tier: BusTier) async throws {
        let bus = try await BusUnderTest(tier)
        let client = try bus.client()
        _ = try await client.publish(try OutgoingEvent(rates(["USD": "1.1", "GBP": "0.8"])))
        let requests = try [Self.request("EUR", "USD"), Self.request("EUR", "GBP")]
        let positions = try await client.publish(requests).compactMap(\.position)
        // As if a host had published the first answer and died before the second.
        let first = try Emitted(PairAdded(base: "EUR", quote: "USD")).outgoing(
            id: .derived(module: "watchlist", position: positions[0], index: 0), module: "watchlist",
            causation: positions[0], correlation: requests[0].id)
        _ = try await client.publish(first)

        let harness = HostHarness(bus: bus, snapshots: InMemorySnapshotStore())
        let statistics = try harness.start()
        await statistics.waitUntilCaughtUp()
        #expect(statistics.republished == 1)
        try await harness.stop()
        let answers = try Self.answers(in: bus)
        #expect(answers[requests[0].id] == ["bureau.watchlist.PairAdded"])
        #expect(answers[requests[1].id] == ["bureau.watchlist.PairAdded"])
    }

    @Test(arguments: BusTier.allCases)
    func snapshotsAreWrittenOnlyForInputsWhoseOutputsAreAcknowledged(tier: BusTier) async throws {
        let bus = try await BusUnderTest(tier)
        let snapshots = InMemorySnapshotStore()
        let client = try bus.client()
        _ = try await client.publish(try OutgoingEvent(rates(["USD": "1.1", "GBP": "0.8"])))
        let harness = HostHarness(bus: bus, snapshots: snapshots)
        let statistics = try harness.start(snapshotEvery: 5)
        await statistics.waitUntilCaughtUp()
        var last: UInt64 = 0
        for index in 0..<23 {
            last = try await client.publish(try Self.request("EUR", index % 2 == 0 ? "USD" : "GBP")).position ?? 0
        }
        await statistics.waitUntilApplied(last)
        await harness.crash()
        let saved = try #require(
            snapshots.load(WatchlistReducer.State.self, module: "watchlist", stateVersion: 1, rejected: { _ in }))
        // Every answer to an input the snapshot covers is in the log.
        let answers = try Self.answers(in: bus)
        for record in try bus.records() where record.position <= saved.position {
            let event = try StoredEvent(envelopeBytes: record.body)
            if event.type == PairAddRequested.protoMessageName { #expect(answers[event.id]?.count == 1) }
        }
        #expect(statistics.snapshots >= 4)
    }

    @Test(arguments: BusTier.allCases)
    func failedSnapshotSavesAreRetriedAndTheHostGoesOnAnswering(tier: BusTier) async throws {
        let bus = try await BusUnderTest(tier)
        let snapshots = FailingSnapshotStore()
        let client = try bus.client()
        _ = try await client.publish(try OutgoingEvent(rates(["USD": "1.1", "GBP": "0.8"])))
        let harness = HostHarness(bus: bus, snapshots: snapshots)
        // A snapshot after every input, retried at the first input after a failure.
        let statistics = try harness.start(snapshotEvery: 1, snapshotRetry: Backoff(initial: .zero, jitter: 0))
        await statistics.waitUntilCaughtUp()
        let saved = statistics.snapshots
        // The store goes away for three saves, as a store failing over does.
        snapshots.failSaves(3)
        var requests: [OutgoingEvent] = []
        var last: UInt64 = 0
        for index in 0..<8 {
            let request = try Self.request("EUR", index % 2 == 0 ? "USD" : "GBP")
            requests.append(request)
            last = try #require(try await client.publish(request).position)
            await statistics.waitUntilApplied(last)
        }
        try await harness.stop()
        // One save per input and one at shutdown: three failed, the six after them stored.
        #expect(statistics.failedSnapshots == 3)
        #expect(statistics.snapshots == saved + 6)
        let stored = try #require(
            snapshots.load(WatchlistReducer.State.self, module: "watchlist", stateVersion: 1, rejected: { _ in }))
        #expect(stored.position >= last, "the snapshot after the failures covers the last input")
        #expect(stored.state.pairs.map(\.quote) == ["USD", "GBP"])
        let answers = try Self.answers(in: bus)
        #expect(requests.allSatisfy { answers[$0.id]?.count == 1 }, "\(answers)")
    }

    @Test func aSnapshotSaveThatFailsAtShutdownIsNotFatal() async throws {
        let bus = try await BusUnderTest(.inMemory)
        let snapshots = FailingSnapshotStore()
        let harness = HostHarness(bus: bus, snapshots: snapshots)
        let statistics = try harness.start()
        await statistics.waitUntilCaughtUp()
        let position = try #require(try await bus.client().publish(try Self.request("EUR", "USD")).position)
        await statistics.waitUntilApplied(position)
        snapshots.failSaves(1)
        try await harness.stop()
        #expect(statistics.failedSnapshots == 1)
        let stored = snapshots.load(
            WatchlistReducer.State.self, module: "watchlist", stateVersion: 1, rejected: { _ in })
        #expect((stored?.position ?? 0) < position, "the failed save stored nothing")
    }

    @Test(arguments: BusTier.allCases)
    func aDamagedSnapshotIsIgnoredWithAWarningAndTheStateRebuiltFromTheLog(tier: BusTier) async throws {
        let bus = try await BusUnderTest(tier)
        let snapshots = FileSnapshotStore(directory: bus.directory.file("snapshots"))
        let client = try bus.client()
        _ = try await client.publish(try OutgoingEvent(rates(["USD": "1.1", "GBP": "0.8"])))
        let first = HostHarness(bus: bus, snapshots: snapshots)
        let before = try first.start()
        let requests = try [Self.request("EUR", "USD"), Self.request("EUR", "GBP")]
        let positions = try await client.publish(requests).compactMap(\.position)
        await before.waitUntilApplied(positions[1])
        try await first.stop()
        let path = snapshots.path(of: "watchlist")
        let size = Files.size(path)
        try Files.overwrite(path, at: size - 5, with: [0x21])

        let second = HostHarness(bus: bus, snapshots: snapshots)
        let after = try second.start()
        await after.waitUntilCaughtUp()
        #expect(after.startedFrom == 0, "the damaged snapshot is not used")
        let next = try await client.publish([try Self.request("EUR", "USD")]).compactMap(\.position)
        await after.waitUntilApplied(next[0])
        try await second.stop()
        // Rebuilt from the log: the pairs it had, every request answered once, a sound snapshot again.
        let answers = try Self.answers(in: bus)
        #expect(requests.allSatisfy { answers[$0.id]?.count == 1 })
        #expect(
            snapshots.load(WatchlistReducer.State.self, module: "watchlist", stateVersion: 1, rejected: { _ in })?.state
                .pairs.map(\.quote) == ["USD", "GBP"])
    }
}
