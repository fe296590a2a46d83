import BureauSchemas
import Bus
import EventLog
import FeatureTestSupport
import Foundation
import Guards
import InMemoryBus
import InMemoryStores
import Runtime
import TestSupport
import Testing
import WatchlistFeature

/// One step for every runner of reducers: the host publishes what replay computes, down to the
/// `ErrorRaised` for an input that does not decode, and the verifier compares it in full.
@Suite(.timeLimit(.minutes(1)))
struct ReducerStepTests {
    static func malformedRequest() -> OutgoingEvent {
        OutgoingEvent(type: PairAddRequested.protoMessageName, payload: Data([0xFF, 0xFF, 0xFF]))
    }

    @Test func anInputThatDoesNotDecodeYieldsTheSameErrorWhereverTheReducerRuns() async throws {
        let bus = try await BusUnderTest(.inMemory)
        let client = try bus.client()
        _ = try await client.publish(try OutgoingEvent(rates(["USD": "1.1"])))
        let position = try #require(try await client.publish(Self.malformedRequest()).position)
        let harness = HostHarness(bus: bus, snapshots: InMemorySnapshotStore())
        let statistics = try harness.start()
        let acknowledged = await Timeout.result(within: .seconds(30)) { () async -> Bool in
            await statistics.waitUntilAcknowledged(1)
            return true
        }
        try await harness.stop()
        try #require(acknowledged == true, "the host did not acknowledge its output within 30 s")

        let events = try bus.records().map { try StoredEvent(envelopeBytes: $0.body) }
        let published = try #require(events.first { $0.causation == position })
        // Given the same event, the step computes exactly what the host published.
        var state = WatchlistReducer().initialState
        guard case .malformed(let error, let reason) = WatchlistReducer().step(events[Int(position) - 1], state: &state)
        else {
            Issue.record("the step did not find the input malformed")
            return
        }
        #expect(published.id == error.id && published.type == Bureau_System_ErrorRaised.protoMessageName)
        #expect(published.payload == error.payload)
        let raised = try Bureau_System_ErrorRaised(serializedBytes: published.payload)
        #expect(raised.code == "malformed-input" && raised.message == reason && raised.causation == position)
        // The verifier compares it in full: a changed message is a divergence.
        let (divergence, counts) = ReplayVerifier.verify(reducers: [WatchlistReducer()], events: events)
        #expect(divergence == nil)
        #expect(counts.first?.malformedInputs == 1)
        var altered = events
        let index = try #require(altered.firstIndex { $0.id == published.id })
        var changed = raised
        changed.message = "another message"
        altered[index].payload = try changed.serializedData()
        let (found, _) = ReplayVerifier.verify(reducers: [WatchlistReducer()], events: altered)
        #expect(found?.kind == .different)
        #expect(found?.differences.contains { $0.path.hasPrefix("payload") } == true)
    }

    @Test func replaysAdvanceWithoutOutputsLeavesTheStateAndCountsTheStepLeaves() throws {
        // Given rates, requests that are accepted, refused and malformed, and the answers.
        var position: UInt64 = 0
        func stored(_ event: OutgoingEvent, module: String = "") -> StoredEvent {
            position += 1
            return StoredEvent(
                position: position, id: event.id, type: event.type, commitTime: CommitTime(seconds: 1, nanos: 0),
                producerModule: module.isEmpty ? event.module : module, payload: event.payload)
        }
        var events = [stored(try OutgoingEvent(rates(["USD": "1.1", "GBP": "0.8"])))]
        for request in [
            PairAddRequested(base: "EUR", quote: "USD"), PairAddRequested(base: "EUR", quote: "USD"),
            PairAddRequested(base: "EUR", quote: "XXX"), PairAddRequested(base: "gbp", quote: "usd"),
        ] {
            events.append(stored(try OutgoingEvent(request)))
        }
        events.append(stored(Self.malformedRequest()))
        events.append(stored(try OutgoingEvent(PairRemoveRequested(base: "EUR", quote: "USD"))))
        var stepped = ReducerReplay(WatchlistReducer())
        for event in events {
            for answer in stepped.apply(event, keepOutputs: false) {
                events.append(stored(answer, module: "watchlist"))
            }
        }

        // When one replay steps and another advances over the same log.
        var stepping = ReducerReplay(WatchlistReducer())
        var advancing = ReducerReplay(WatchlistReducer())
        var kinds: [ReducerStep.Kind] = []
        for event in events {
            let step = stepping.applyInput(event)
            let kind = advancing.advance(event)
            #expect(kind == step.kind, "position \(event.position)")
            kinds.append(kind)
        }

        // Then they agree on every state, count and position.
        #expect(advancing.state == stepping.state)
        #expect(advancing.state.pairs == [WatchlistReducer.Pair(base: "GBP", quote: "USD")])
        #expect(advancing.inputCount == stepping.inputCount && advancing.inputCount == 6)
        #expect(advancing.malformed == stepping.malformed && advancing.malformed == [6])
        #expect(advancing.position == stepping.position)
        #expect(kinds.filter { $0 == .notAnInput }.count == events.count - 7)
    }
}
