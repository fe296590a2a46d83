import BureauSchemas
import MetricsTestKit
import Testing

@testable import ZeroMQBus

/// What the bus serves of its consumers' lag: unknown is absent, never 0 and never stale.
struct BusMetricsTests {
    static let dimensions = [("module", "watchlist"), ("process", "reducers")]

    static func status(lagMs: UInt64?) -> Bureau_Bus_ConsumerStatus {
        var status = Bureau_Bus_ConsumerStatus()
        status.consumer = "watchlist"
        status.process = "reducers"
        status.lagEvents = 7
        status.lagTimeKnown = lagMs != nil
        status.lagMs = lagMs ?? 0
        return status
    }

    @Test func aLagInSecondsIsAbsentUntilKnownAndAbsentAgainOnceItCannotBeTold() throws {
        let metrics = TestMetrics()
        let bus = BusMetrics(factory: metrics)
        // Given a consumer whose oldest unread event's time the bus does not know
        bus.consumersSeen([Self.status(lagMs: nil)])
        #expect(throws: (any Error).self) { try metrics.expectGauge("bureau_consumer_lag_seconds", Self.dimensions) }
        #expect(try metrics.expectGauge("bureau_consumer_lag_events", Self.dimensions).lastValue == 7)
        // When it becomes known, it is served
        bus.consumersSeen([Self.status(lagMs: 2_500)])
        #expect(try metrics.expectGauge("bureau_consumer_lag_seconds", Self.dimensions).lastValue == 2.5)
        // And when it cannot be told again, it is taken away rather than left at 2.5
        bus.consumersSeen([Self.status(lagMs: nil)])
        #expect(throws: (any Error).self) { try metrics.expectGauge("bureau_consumer_lag_seconds", Self.dimensions) }
        // Then known once more, served again
        bus.consumersSeen([Self.status(lagMs: 500)])
        #expect(try metrics.expectGauge("bureau_consumer_lag_seconds", Self.dimensions).lastValue == 0.5)
    }
}
