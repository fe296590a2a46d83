import Bus
import FeatureTestSupport
import Foundation
import TestSupport
import Testing
import ZeroMQBus

/// A stopped deployment that recorded a session: the bus and `bureau run` for the four
/// reducers, rates, then half the requests, new rates, the other half, every one answered.
struct RecordedSession {
    let directory: TemporaryDirectory
    let bus: BusProcess
    let requests: [OutgoingEvent]
    let events: [StoredEvent]

    static func record(requests count: Int) async throws -> RecordedSession {
        let directory = try TemporaryDirectory("session")
        let bus = BusProcess(directory: directory.path)
        try await bus.start()
        let client = try ZeroMQBusClient(location: bus.location, options: .init(process: "test"))
        _ = try await client.publish(try OutgoingEvent(rates(["USD": "1.1172", "JPY": "175.68", "GBP": "0.8338"])))
        let host = try ChildProcess(
            BureauExecutable.path,
            ["run", "watchlist", "converter", "reservations", "alerts", "--data", bus.location.dataDirectory],
            directory: directory.path, name: "run", readiness: true)
        try await host.waitUntilReady()
        var generator = TestSeed.generator(for: "recorded session: the requests")
        let requests = try ExactlyOnceTests.requests(count, using: &generator)
        _ = try await client.publish(Array(requests.prefix(count / 2)))
        _ = try await client.publish(try OutgoingEvent(rates(["USD": "1.25", "JPY": "170"], asOf: "2026-10-31")))
        _ = try await client.publish(Array(requests.dropFirst(count / 2)))
        let answered = try await ExactlyOnceTests.waitForAnswers(
            to: Set(requests.map(\.id)), client: client, timeout: .seconds(60))
        #expect(answered == requests.count)
        host.signal(SIGTERM)
        #expect(await host.exitCode() == 0)
        client.close()
        #expect(await bus.stop() == 0)
        let events = try bus.records().map { try StoredEvent(envelopeBytes: $0.body) }
        return RecordedSession(directory: directory, bus: bus, requests: requests, events: events)
    }
}
