import BureauSchemas
import Bus
import EventLog
import FeatureTestSupport
import Foundation
import InMemoryStores
import Runtime
import Synchronization
import TestSupport
import Testing
import WatchlistFeature

/// A session recorded by a real reducer host on an in-process bus, then replayed offline.
@Suite(.timeLimit(.minutes(3)))
struct ReplayVerifierTests {
    /// What a recording left: the log's events and every snapshot the host wrote on the way.
    struct Recording {
        let bus: BusUnderTest
        let events: [StoredEvent]
        let snapshots: [Snapshot<WatchlistReducer.State>]

        /// The watchlist requests, in order: what no module produced.
        var requests: [StoredEvent] {
            events.filter { $0.type.hasPrefix("bureau.watchlist.Pair") && $0.producerModule.isEmpty }
        }

        /// The position of the watchlist's answer to the input at `position`.
        func answer(to position: UInt64) -> StoredEvent? {
            events.first { $0.producerModule == "watchlist" && $0.causation == position }
        }
    }

    /// Rates, then 40 watchlist requests (added, duplicates, unknown currencies, removals),
    /// more rates, all answered by a host that snapshots every 5 inputs.
    static func record() async throws -> Recording {
        // Over a daemon: replay reads the log's files.
        let bus = try await BusUnderTest(.live)
        let store = RecordingSnapshotStore()
        let harness = HostHarness(bus: bus, snapshots: store)
        let statistics = try harness.start(snapshotEvery: 5)
        await statistics.waitUntilCaughtUp()
        let client = try bus.client()
        _ = try await client.publish(try OutgoingEvent(rates(["USD": "1.1", "GBP": "0.8", "JPY": "170"])))
        let quotes = ["USD", "GBP", "JPY", "XYZ", "EUR"]
        var requests: [OutgoingEvent] = []
        for index in 0..<40 {
            let quote = quotes[index % quotes.count]
            requests.append(
                index % 3 == 2
                    ? try OutgoingEvent(PairRemoveRequested(base: "EUR", quote: quote))
                    : try OutgoingEvent(PairAddRequested(base: "EUR", quote: quote)))
            if index == 20 {
                requests.append(try OutgoingEvent(rates(["USD": "1.2", "CHF": "0.9"], asOf: "2026-10-31")))
            }
        }
        _ = try await client.publish(requests)
        // Every request gets exactly one answer.
        await statistics.waitUntilAcknowledged(40)
        try await harness.stop()
        client.close()
        let events = try bus.records().map { try StoredEvent(envelopeBytes: $0.body) }
        return Recording(bus: bus, events: events, snapshots: store.all(WatchlistReducer.State.self))
    }

    @Test func verificationPassesOnARecordedSession() async throws {
        let recording = try await Self.record()
        let (divergence, counts) = ReplayVerifier.verify(reducers: [WatchlistReducer()], events: recording.events)
        #expect(divergence == nil, "\(divergence?.description ?? "")")
        #expect(counts.map(\.module) == ["watchlist"])
        #expect(counts.first?.inputs == 42)
        #expect(counts.first?.outputsCompared == 40)
        #expect(counts.first?.unpublished == 0)
    }

    @Test func aChangedOutputFailsAtItsPositionWithBothEventsShown() async throws {
        let recording = try await Self.record()
        // The 8th request: altered so that its answer names another quote.
        let requests = recording.requests
        let input = requests[7].position
        let answer = try #require(recording.answer(to: input))
        let changed = AlteredReducer(inner: WatchlistReducer(), at: input) { outputs in
            [Emitted(PairRejected(base: "EUR", quote: "CHF", reason: .duplicate, message: "changed"))]
                + outputs.dropFirst()
        }
        let (divergence, counts) = ReplayVerifier.verify(reducers: [changed], events: recording.events)
        let found = try #require(divergence)
        #expect(found.kind == .different)
        #expect(found.module == "watchlist")
        #expect(found.position == answer.position)
        #expect(found.inputPosition == input)
        #expect(found.recorded == answer)
        #expect(found.computed?.id == answer.id)
        #expect(found.differences.contains { $0.path == "payload.quote" && $0.after == .string("CHF") })
        #expect(found.description.contains("divergence at position \(answer.position), module watchlist"))
        #expect(found.description.contains("recorded:    {\"position\":\(answer.position)"))
        #expect(found.description.contains("re-computed: {\"id\":\"\(answer.id)\""))
        // Everything before it matched.
        #expect(counts.first?.outputsCompared == 7)
    }

    /// Reads a watchlist refusal as an addition, and fails on every one: an upcaster's bug, met
    /// on a recorded output.
    struct FailingOutputUpcaster: Upcaster {
        struct Broken: Error, CustomStringConvertible { var description: String { "the refusal has no pair" } }
        var change: String { "a test's broken upcaster of an output" }
        func upcast(_ old: PairRejected, of event: StoredEvent) throws -> PairAdded { throw Broken() }
    }

    @Test func anInputWhoseUpcasterFailsIsCountedAsMalformedAndVerificationNamesItAndTheUpcaster() async throws {
        // Given a log that a host recorded through an upcaster that fails on one input: it
        // answered that input with an ErrorRaised and went on
        let bus = try await BusUnderTest(.inMemory)
        let harness = HostHarness(bus: bus, snapshots: InMemorySnapshotStore())
        let upcasting = try EventUpcasting(
            [ReducerHostTests.FailingUpcaster()], readTypes: [PairAddRequested.protoMessageName])
        let statistics = try harness.start(upcasting: upcasting)
        await statistics.waitUntilCaughtUp()
        let client = try bus.client()
        _ = try await client.publish(try OutgoingEvent(rates(["USD": "1.1"])))
        let old = try OutgoingEvent(Bureau_Alerts_AlertSetRequested())
        let positions = try await client.publish([old, try ReducerHostTests.request("EUR", "USD")]).compactMap(
            \.position)
        await statistics.waitUntilApplied(positions.last ?? 0)
        try await harness.stop()
        // When it is verified, read through the same upcasters
        let events = try bus.records().map { upcasting.upcast(try StoredEvent(envelopeBytes: $0.body)) }
        let (divergence, counts) = ReplayVerifier.verify(reducers: [WatchlistReducer()], events: events)
        // Then it agrees (the ErrorRaised is what the reducer computes too), and says which input was
        // malformed and which upcaster failed on it
        #expect(divergence == nil, "\(divergence?.description ?? "")")
        #expect(counts.first?.malformedInputs == 1)
        let first = try #require(counts.first?.firstMalformed)
        #expect(first.hasPrefix("position \(positions[0]): "), "\(first)")
        #expect(first.contains("FailingUpcaster failed: the old quote is not a currency"), "\(first)")
    }

    @Test func aRecordedOutputWhoseUpcasterFailsIsADivergenceNamingItsPositionAndTheUpcaster() async throws {
        // Given a session recorded without upcasters, read through one that fails on the refusals
        let recording = try await Self.record()
        let upcasting = try EventUpcasting([FailingOutputUpcaster()], readTypes: [PairAdded.protoMessageName])
        let refusal = try #require(recording.events.first { $0.type == PairRejected.protoMessageName })
        // When it is verified
        let (divergence, counts) = ReplayVerifier.verify(
            reducers: [WatchlistReducer()], events: recording.events.map(upcasting.upcast))
        // Then the first refusal is a divergence of its own: its bytes are not compared with today's output
        let found = try #require(divergence)
        #expect(found.kind == .unreadable)
        #expect(found.position == refusal.position)
        #expect(found.differences.isEmpty)
        #expect(
            found.description.hasPrefix(
                "divergence at position \(refusal.position), module watchlist, input at position \(refusal.causation): "
                    + "the recorded output cannot be read: position \(refusal.position): the bureau.watchlist.PairRejected "
                    + "stored there could not be read as bureau.watchlist.PairAdded: FailingOutputUpcaster failed: "
                    + "the refusal has no pair"), "\(found.description)")
        #expect(found.json["reason"] != nil)
        #expect((counts.first?.outputsCompared ?? 0) > 0, "the outputs before it were compared")
    }

    @Test func anOutputTheReducerNoLongerComputesOrAnExtraOneIsADivergence() async throws {
        let recording = try await Self.record()
        let requests = recording.requests
        let input = requests[3].position
        let answer = try #require(recording.answer(to: input))

        let silent = AlteredReducer(inner: WatchlistReducer(), at: input) { _ in [] }
        let missing = try #require(ReplayVerifier.verify(reducers: [silent], events: recording.events).divergence)
        #expect(missing.kind == .notComputed)
        #expect(missing.position == answer.position)
        #expect(missing.recorded == answer && missing.computed == nil)

        let chatty = AlteredReducer(inner: WatchlistReducer(), at: input) { outputs in
            outputs + [Emitted(PairAdded(base: "EUR", quote: "CHF"))]
        }
        let extra = try #require(ReplayVerifier.verify(reducers: [chatty], events: recording.events).divergence)
        #expect(extra.kind == .notRecorded)
        #expect(extra.inputPosition == input)
        #expect(extra.recorded == nil)
        #expect(extra.computed?.id == .derived(module: "watchlist", position: input, index: 1))
        // It shows at the module's next recorded output.
        let next = try #require(recording.answer(to: requests[4].position))
        #expect(extra.position == next.position)
    }

    @Test func replayToAPositionEqualsTheStateTheLiveHostHadThere() async throws {
        let recording = try await Self.record()
        #expect(recording.snapshots.count >= 5)
        let timeline = ReplayTimeline(
            directory: try recording.bus.logDirectory(), reducers: [WatchlistReducer()],
            projections: [AnyProjection(WatchlistProjection())])
        for snapshot in recording.snapshots {
            let replayed = try timeline.snapshot(at: snapshot.position)
            #expect(replayed.position == snapshot.position)
            let state = try #require(replayed.module("watchlist")?.state)
            let decoded = try JSONDecoder().decode(WatchlistReducer.State.self, from: Data(state.description.utf8))
            #expect(decoded == snapshot.state, "at position \(snapshot.position)")
        }
        // Going back gives the same states as going forward did.
        let last = try #require(recording.snapshots.last?.position)
        let forward = try timeline.snapshot(at: last - 3)
        _ = try timeline.snapshot(at: last)
        let fresh = ReplayTimeline(
            directory: try recording.bus.logDirectory(), reducers: [WatchlistReducer()],
            projections: [AnyProjection(WatchlistProjection())])
        #expect(try fresh.snapshot(at: last - 3) == forward)
    }

    @Test func aStepShowsTheEventAndTheStateDifferenceItCaused() async throws {
        let recording = try await Self.record()
        let timeline = ReplayTimeline(
            directory: try recording.bus.logDirectory(), reducers: [WatchlistReducer()],
            projections: [AnyProjection(WatchlistProjection())])
        let request = try #require(recording.events.first { $0.type == PairAddRequested.protoMessageName })
        let step = try #require(try timeline.step(at: request.position))
        #expect(step.event == request)
        #expect(step.changes.map(\.owner) == ["watchlist"])
        #expect(step.changes.first?.differences.contains { $0.path == "pairs[0]" && $0.before == nil } == true)
        let answer = try #require(recording.answer(to: request.position))
        let answered = try #require(try timeline.step(at: answer.position))
        #expect(answered.changes.map(\.owner) == ["projection watchlist"])
        #expect(try timeline.step(at: UInt64(recording.events.count) + 1) == nil)
        let time = answer.commitTime
        #expect(try timeline.position(atOrBefore: time) >= answer.position)
    }

    @Test func jsonDifferencesNameEachChangedField() throws {
        let before = try JSONValue(parsing: #"{"a":1,"b":{"c":"x","d":[1,2]},"gone":true}"#)
        let after = try JSONValue(parsing: #"{"a":1,"b":{"c":"y","d":[1,2,3]},"new":null}"#)
        #expect(
            before.differences(to: after) == [
                FieldDifference(path: "b.c", before: .string("x"), after: .string("y")),
                FieldDifference(path: "b.d[2]", before: nil, after: .number("3")),
                FieldDifference(path: "gone", before: .bool(true), after: nil),
                FieldDifference(path: "new", before: nil, after: .null),
            ])
        let text = #"{"amount":12.3450,"s":"a\"\\\n\u00e9\ud83d\ude00","list":[],"o":{}}"#
        let parsed = try JSONValue(parsing: text)
        #expect(parsed["amount"] == .number("12.3450"))
        #expect(parsed["s"] == .string("a\"\\\né😀"))
        #expect(try JSONValue(parsing: parsed.description) == parsed)
        #expect(try JSONValue(parsing: parsed.pretty) == parsed)
        // Only the arrays whose order the caller says does not matter are sorted.
        let sets = try JSONValue(parsing: #"{"set":["b","a"],"list":["d","c"],"objects":[{"z":1},{"y":2}]}"#)
        let sorted = sets.sortingUnorderedArrays { $0["list"] == sets["list"] }
        #expect(sorted.description == #"{"set":["a","b"],"list":["d","c"],"objects":[{"z":1},{"y":2}]}"#)
        for bad in ["{", "[1,]", "{\"a\" 1}", "01x", "\"\\q\"", "[1] 2", String(repeating: "[", count: 600)] {
            #expect(throws: JSONParseError.self, "\(bad)") { try JSONValue(parsing: bad) }
        }
    }
}

/// A snapshot store that keeps every snapshot saved, to observe a live host's state over time.
final class RecordingSnapshotStore: SnapshotStore {
    private let saved = Mutex<[Data]>([])
    private let latest = InMemorySnapshotStore()

    func load<State: Codable & Sendable>(
        _ type: State.Type, module: String, stateVersion: Int, rejected: (String) -> Void
    ) -> Snapshot<State>? {
        latest.load(type, module: module, stateVersion: stateVersion, rejected: rejected)
    }

    func save<State: Codable & Sendable>(_ snapshot: Snapshot<State>) throws {
        try latest.save(snapshot)
        let document = SavedSnapshot(position: snapshot.position, state: snapshot.state)
        let data = try JSONEncoder().encode(document)
        saved.withLock { $0.append(data) }
    }

    /// Every snapshot saved, in order.
    func all<State: Codable & Sendable>(_ type: State.Type) -> [Snapshot<State>] {
        saved.withLock { $0 }.compactMap { data in
            guard let document = try? JSONDecoder().decode(SavedSnapshot<State>.self, from: data) else { return nil }
            return Snapshot(module: "", stateVersion: 0, position: document.position, state: document.state)
        }
    }

    private struct SavedSnapshot<State: Codable>: Codable {
        var position: UInt64
        var state: State
    }
}
