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
        let directory = try TemporaryDirectory("det")
        let bus = BusProcess(directory: directory.path)
        try await bus.start()
        let client = try BusClient(location: bus.location, options: .init(process: "test"))
        _ = try await client.publish(try OutgoingEvent(rates(["USD": "1.1172", "JPY": "175.68", "GBP": "0.8338"])))
        let host = try ChildProcess(
            BureauExecutable.path,
            ["run", "watchlist", "converter", "reservations", "alerts", "--data", bus.location.dataDirectory],
            directory: directory.path, name: "run", readiness: true)
        try await host.waitUntilReady()
        let requests = try ExactlyOnceTests.requests(600)
        _ = try await client.publish(requests)
        _ = try await client.publish(try OutgoingEvent(rates(["USD": "1.25", "JPY": "170"], asOf: "2026-10-31")))
        _ = try await ExactlyOnceTests.waitForAnswers(
            to: Set(requests.map(\.id)), client: client, timeout: .seconds(60))
        host.signal(SIGTERM)
        _ = await host.exitCode()
        client.close()
        await bus.stop()
        let events = try bus.records().map { try StoredEvent(envelopeBytes: $0.body) }

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
