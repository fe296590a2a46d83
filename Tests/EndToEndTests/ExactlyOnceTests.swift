import AlertsFeature
import BureauSchemas
import Bus
import BusTesting
import ConverterFeature
import EventLog
import FeatureTestSupport
import Foundation
import Guards
import ReservationsFeature
import Runtime
import TestSupport
import Testing
import WatchlistFeature
import ZeroMQBus

/// Kills the reducer host with SIGKILL at random moments while requests stream in.
@Suite(.timeLimit(.minutes(4)))
struct ExactlyOnceTests {
    /// Each request module's reducer and the answer types of its requests.
    static let modules = ["watchlist", "converter", "reservations", "alerts"]

    static func requests(_ count: Int, using generator: inout Xoshiro256) throws -> [OutgoingEvent] {
        let currencies = ["USD", "JPY", "GBP", "CHF", "XYZ"]
        return try (0..<count).map { index -> OutgoingEvent in
            let quote = currencies[Int(generator.next() % UInt64(currencies.count))]
            switch index % 6 {
            case 0: return try OutgoingEvent(PairAddRequested(base: "EUR", quote: quote))
            case 1: return try OutgoingEvent(PairRemoveRequested(base: "EUR", quote: quote))
            case 2:
                return try OutgoingEvent(
                    AmountSetRequested(value: ["100", "0", "12.345", "7"][index % 4], currency: "EUR"))
            case 3:
                return try OutgoingEvent(
                    ReservationRequested(base: "EUR", quote: "USD", amount: "50", rate: index % 4 == 3 ? "1.1172" : "9")
                )
            case 4: return try OutgoingEvent(CancellationRequested(reservationID: "R\(index)"))
            default:
                return try OutgoingEvent(
                    AlertSetRequested(base: "EUR", quote: quote, direction: .above, threshold: "1.2"))
            }
        }
    }

    @Test func killingTheReducerHost20TimesLosesNoAnswerAndDuplicatesNone() async throws {
        let directory = try TemporaryDirectory("once")
        let bus = BusProcess(directory: directory.path)
        try await bus.start()
        let client = try bus.client("producer", publishTimeout: .seconds(60))
        _ = try await client.publish(try OutgoingEvent(rates(["USD": "1.1172", "JPY": "175.68", "GBP": "0.8338"])))

        let host = HostProcess(location: bus.location, directory: directory.path, modules: Self.modules)
        try host.start(["--snapshot-every", "25"])
        var generator = TestSeed.generator(for: "exactly once: the requests and when to kill")
        let requests = try Self.requests(2_000, using: &generator)
        let producing = StopFlag()
        let producer = Task {
            defer { producing.set() }
            for batch in stride(from: 0, to: requests.count, by: 10) {
                _ = try await client.publish(Array(requests[batch..<min(batch + 10, requests.count)]))
                // Paced, so that the kills land while requests stream in.
                try await Task.sleep(for: .milliseconds(12))
            }
        }
        // Kill at random moments while the requests stream in: at least 20 kills before the
        // last request is published.
        var killsWhileStreaming = 0
        while !producing.isSet {
            try await Task.sleep(for: .milliseconds(Int.random(in: 20...120, using: &generator)))
            await host.kill()
            if !producing.isSet { killsWhileStreaming += 1 }
            try host.start(["--snapshot-every", "25"])
        }
        try await producer.value
        #expect(killsWhileStreaming >= 20)
        // Every request answered: wait for the answers, bounded.
        let requestIDs = Set(requests.map(\.id))
        let answered = try await Self.waitForAnswers(to: requestIDs, client: client, timeout: .seconds(90))
        #expect(answered == requestIDs.count)
        try await host.waitUntilReady()
        let hostExit = await host.stop()
        #expect(hostExit == 0, "\(host.process?.standardError.suffix(2000) ?? "")")
        client.close()
        #expect(await bus.stop() == 0)

        // Exactly one answer per request, and the outputs and states of a clean run.
        let events = try bus.records().map { try StoredEvent(envelopeBytes: $0.body) }
        var answers: [EventID: Int] = [:]
        for event in events where Self.modules.contains(event.producerModule) {
            answers[event.correlation, default: 0] += 1
        }
        let unanswered = requests.filter { answers[$0.id] == nil }.count
        let duplicated = requests.filter { (answers[$0.id] ?? 0) > 1 }.count
        #expect(unanswered == 0)
        #expect(duplicated == 0)
        #expect(Set(events.map(\.id)).count == events.count)

        try Self.expectCleanRun(WatchlistReducer(), events: events, location: bus.location)
        try Self.expectCleanRun(ConverterReducer(), events: events, location: bus.location)
        try Self.expectCleanRun(ReservationsReducer(), events: events, location: bus.location)
        try Self.expectCleanRun(AlertsReducer(), events: events, location: bus.location)
    }

    /// The module's outputs in the log are those a clean run computes, and the host's final
    /// snapshot holds the state a clean run reaches at the same position.
    static func expectCleanRun<R: Reducer>(_ reducer: R, events: [StoredEvent], location: BusLocation) throws {
        var replay = ReducerReplay(reducer)
        let recorded = events.filter { reducer.isOwnOutput($0) }
        let snapshot = FileSnapshotStore(directory: location.snapshotDirectory).load(
            R.State.self, module: reducer.module, stateVersion: reducer.stateVersion, rejected: { _ in })
        var stateAtSnapshot: R.State?
        for event in events {
            replay.apply(event)
            if event.position == snapshot?.position { stateAtSnapshot = replay.state }
        }
        #expect(recorded.count == replay.outputs.count, "\(reducer.module): outputs in the log vs a clean run")
        let recomputed = Dictionary(replay.outputs.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for event in recorded {
            let clean = recomputed[event.id]
            #expect(clean?.type == event.type && clean?.payload == event.payload, "\(reducer.module) \(event.position)")
        }
        let saved = try #require(snapshot, "\(reducer.module) wrote a final snapshot")
        #expect(saved.state == stateAtSnapshot, "\(reducer.module): the host's state equals a clean run's")
        #expect(saved.position >= replay.position, "\(reducer.module): the final snapshot covers every input")
    }

    /// Counts requests answered (by correlation) by the request modules, until all are or
    /// `timeout` passes.
    static func waitForAnswers(to ids: Set<EventID>, client: ZeroMQBusClient, timeout: Duration) async throws -> Int {
        let answers = try await client.collect(
            until: .now + timeout, where: { ids.contains($0.correlation) && modules.contains($0.producerModule) }
        ) { Set($0.map(\.correlation)).count == ids.count }
        return Set(answers.map(\.correlation)).count
    }
}

/// `bureau run MODULE…` as a child process.
final class HostProcess: @unchecked Sendable {
    let location: BusLocation
    let directory: String
    let modules: [String]
    private(set) var process: ChildProcess?
    private var starts = 0

    init(location: BusLocation, directory: String, modules: [String]) {
        self.location = location
        self.directory = directory
        self.modules = modules
    }

    func start(_ extra: [String] = []) throws {
        starts += 1
        process = try ChildProcess(
            BureauExecutable.path, ["run"] + modules + ["--data", location.dataDirectory] + extra, directory: directory,
            name: "run\(starts)", readiness: true)
    }

    /// Waits until every hosted reducer has caught up with the log.
    func waitUntilReady() async throws {
        try await process?.waitUntilReady()
    }

    func kill() async {
        process?.signal(SIGKILL)
        _ = await process?.exitCode()
    }

    func stop() async -> Int32? {
        process?.signal(SIGTERM)
        return await process?.exitCode()
    }
}
