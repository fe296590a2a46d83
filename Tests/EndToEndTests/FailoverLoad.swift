import Bus
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
        let received = receive(batches * perBatch, from: consumer)
        let acknowledged = try await publish(batches: batches, perBatch: perBatch, on: producer, failOver: failOver)
        expectExactlyOnce(try await received.value, acknowledged: acknowledged)
    }

    /// The first `count` events a subscriber from position 0 receives, as positions and ids.
    static func receive(_ count: Int, from consumer: any EventBus) -> Task<[(position: UInt64, id: EventID)], any Error>
    {
        let subscription = consumer.subscribe(.all, after: 0)
        return Task {
            var received: [(position: UInt64, id: EventID)] = []
            for try await item in subscription {
                if case .event(let event) = item {
                    received.append((event.position, event.id))
                    if received.count == count { break }
                }
            }
            return received
        }
    }

    /// Every acknowledged event once, at its acknowledged position, positions contiguous from 1.
    static func expectExactlyOnce(_ stored: [(position: UInt64, id: EventID)], acknowledged: [EventID: UInt64]) {
        #expect(stored.map(\.position) == (0..<UInt64(stored.count)).map { $0 + 1 })
        #expect(stored.count == acknowledged.count)
        #expect(
            Dictionary(stored.map { ($0.id, $0.position) }, uniquingKeysWith: { first, _ in first }) == acknowledged)
    }
}
