import Bus
import BusTesting
import EventLog
import Foundation
import Testing

/// A producer publishing through a failover, and a subscriber reading from the start: what the
/// standby and store failover tests share.
enum FailoverLoad {
    static func events(_ count: Int, tag: String) -> [OutgoingEvent] {
        (0..<count).map { OutgoingEvent(type: "bureau.bench.Happened", payload: Data("\(tag) \($0)".utf8)) }
    }

    /// Publishes `batches` batches of `perBatch` events, calling `failOver` before the middle one;
    /// returns the position each event was acknowledged at. Every event must be acknowledged,
    /// and once.
    static func publish(
        batches: Int, perBatch: Int, on producer: any EventBus, failOver: () async throws -> Void
    ) async throws -> [EventID: UInt64] {
        var acknowledged: [EventID: UInt64] = [:]
        for batch in 0..<batches {
            if batch == batches / 2 { try await failOver() }
            let events = events(perBatch, tag: "batch \(batch)")
            for (event, outcome) in zip(events, try await producer.publish(events)) {
                let position = try #require(outcome.position, "\(outcome)")
                #expect(acknowledged.updateValue(position, forKey: event.id) == nil)
            }
        }
        return acknowledged
    }

    /// Publishes through `producer` as ``publish(batches:perBatch:on:failOver:)`` does while
    /// `consumer` subscribes from the start, then expects every acknowledged event exactly once
    /// in what the subscriber received.
    static func publishAndReceiveExactlyOnce(
        batches: Int, perBatch: Int, producer: any EventBus, consumer: any EventBus,
        failOver: () async throws -> Void
    ) async throws {
        let count = batches * perBatch
        // Subscribed before the first publish, so that it reads through the failover.
        let received = EventCollector(consumer, .all, after: 0)
        defer { received.stop() }
        let acknowledged = try await publish(batches: batches, perBatch: perBatch, on: producer, failOver: failOver)
        // Every event is acknowledged by now; the subscriber has a minute to receive them.
        let events = try await received.wait(until: .now + .seconds(60)) { $0.count >= count }
        expectExactlyOnce(events.prefix(count).map { ($0.position, $0.id) }, acknowledged: acknowledged)
    }

    /// Every acknowledged event once, at its acknowledged position, positions contiguous from 1.
    static func expectExactlyOnce(_ stored: [(position: UInt64, id: EventID)], acknowledged: [EventID: UInt64]) {
        let contiguous: [UInt64] = stored.isEmpty ? [] : Array(1...UInt64(stored.count))
        #expect(stored.map(\.position) == contiguous)
        #expect(stored.count == acknowledged.count)
        let storedPositions: [EventID: UInt64] = Dictionary(
            stored.map { ($0.id, $0.position) }, uniquingKeysWith: { first, _ in first })
        #expect(storedPositions == acknowledged)
    }
}
