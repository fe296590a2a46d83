import BureauSchemas
import Bus
import EventLog
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(2)))
struct BusDaemonTests {
    static func event(_ index: Int, type: String = "bureau.test.Happened") -> OutgoingEvent {
        OutgoingEvent(type: type, payload: Data("payload \(index)".utf8), module: "test")
    }

    @Test func publishedEventsAreAcknowledgedWithContiguousPositions() async throws {
        let bus = try TestBus()
        let client = try bus.client()
        let outcomes = try await client.publish((1...10).map { Self.event($0) })
        #expect(outcomes == (1...10).map { .committed(UInt64($0)) })
        let more = try await client.publish(Self.event(11))
        #expect(more == .committed(11))
    }

    @Test func aRetriedEventIsRecognisedAsADuplicate() async throws {
        let bus = try TestBus()
        let client = try bus.client()
        let event = Self.event(1)
        #expect(try await client.publish(event) == .committed(1))
        #expect(try await client.publish([Self.event(2), event]) == [.committed(2), .duplicate(1)])
        // The daemon remembers ids across restarts.
        bus.stop()
        try bus.start()
        let again = try bus.client()
        #expect(try await again.publish(event) == .duplicate(1))
    }

    @Test func aSubscriberReceivesTheLogThenLiveEvents() async throws {
        let bus = try TestBus()
        let client = try bus.client()
        _ = try await client.publish((1...50).map { Self.event($0) })
        let subscription = client.subscribe()
        var positions: [UInt64] = []
        var caughtUp = false
        for try await item in subscription {
            switch item {
            case .event(let event):
                positions.append(event.position)
                #expect(String(decoding: event.payload, as: UTF8.self) == "payload \(event.position)")
            case .caughtUp:
                if !caughtUp {
                    caughtUp = true
                    _ = try await client.publish((51...60).map { Self.event($0) })
                }
            case .connection:
                break
            }
            if positions.count == 60 { break }
        }
        #expect(positions == Array(1...60))
    }
}
