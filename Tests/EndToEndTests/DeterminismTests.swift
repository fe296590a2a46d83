import AlertsFeature
import Bus
import ConverterFeature
import EventLog
import Foundation
import ReservationsFeature
import Runtime
import TestSupport
import Testing
import WatchlistFeature

/// Running the reducers over the same log twice gives byte-identical outputs, ids included.
@Suite(.timeLimit(.minutes(3)))
struct DeterminismTests {
    @Test func reducersProduceByteIdenticalOutputsOnEveryRun() async throws {
        let events = try await RecordedSession.record(requests: 600).events

        func outputs<R: Reducer>(_ reducer: R) throws -> [Data] {
            var replay = ReducerReplay(reducer)
            for event in events { replay.apply(event) }
            return try replay.outputs.map { try $0.envelopeBytes(process: "replay") }
        }
        for run in [
            { try outputs(WatchlistReducer()) }, { try outputs(ConverterReducer()) },
            { try outputs(ReservationsReducer()) }, { try outputs(AlertsReducer()) },
        ] as [() throws -> [Data]] {
            let first = try run()
            let second = try run()
            #expect(!first.isEmpty)
            #expect(first == second)
        }
        // And what the host published is what a replay computes, byte for byte.
        var replay = ReducerReplay(WatchlistReducer())
        for event in events { replay.apply(event) }
        let published = events.filter { $0.producerModule == "watchlist" }
        #expect(published.map(\.id) == replay.outputs.map(\.id))
        #expect(published.map(\.payload) == replay.outputs.map(\.payload))
    }
}
