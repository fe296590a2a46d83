import Bus
import BusTesting
import Foundation
import InMemoryBus
import Testing

struct EventBusCollectTests {
    /// Events come to a collector in batches: one that reaches the count may bring more, and a
    /// test that asked for one and got two failed (CI: two RatesPublished for one asked).
    @Test func aCollectOfACountReturnsTheFirstThatManyWhateverCameWithThem() async throws {
        let bus = InMemoryBus(process: "collect-test")
        let events = (0..<50).map { index in
            OutgoingEvent(id: .random(), type: "bureau.test.Counted", payload: Data("\(index)".utf8), module: "test")
        }
        let outcomes = try await bus.publish(events)
        #expect(outcomes.count == 50)

        let first = try await bus.collect(.all, count: 2, timeout: .seconds(10))

        #expect(first.map(\.position) == [1, 2])
        #expect(first.map(\.id) == events.prefix(2).map(\.id))
    }
}
