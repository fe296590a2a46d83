import BureauSchemas
import Bus
import FaultInjection
import Foundation
import MetricsTestKit
import TestSupport
import Testing

@testable import ZeroMQBus

/// What the bus records through swift-metrics: its consumers' lag (unknown is absent, never 0
/// and never stale), its publishes by outcome, and its store's errors.
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

    static func event(_ index: Int, bytes: Int = 8) -> OutgoingEvent {
        OutgoingEvent(type: "bureau.test.Happened", payload: Data(repeating: UInt8(index), count: bytes))
    }

    /// Every publish request is counted, and each event by what the bus did with it: committed,
    /// duplicate, or rejected by reason — a full disk's refusals included, as `not-stored`.
    @Test func publishOutcomesAreCountedByOutcomeAndReason() async throws {
        let metrics = TestMetrics()
        let disk = FaultInjectingFileSystem(plan: nil)
        let bus = try await TestBus {
            $0.metricsFactory = metrics
            $0.fileSystem = disk
            $0.maxEnvelopeBytes = 1024
        }
        let client = try bus.client()
        defer { client.close() }
        func outcomes(_ outcome: String, _ reason: String = "") -> Int64? {
            try? metrics.expectCounter("bureau_bus_publish_outcomes_total", [("outcome", outcome), ("reason", reason)])
                .totalValue
        }
        // Given one event committed, then sent again, then one over the bus's size limit
        let first = Self.event(1)
        #expect(try await client.publish(first) == .committed(1))
        #expect(try await client.publish(first) == .duplicate(1))
        guard case .rejected = try await client.publish(Self.event(2, bytes: 4096)) else {
            Issue.record("an envelope over the limit is rejected")
            return
        }
        // When the disk is full, two events are refused in one request
        disk.fillDisk()
        let refused = try await client.publish([Self.event(3), Self.event(4)])
        #expect(refused.allSatisfy { $0.position == nil }, "\(refused)")
        disk.freeSpace()

        // Then four requests are counted, and each event by its outcome
        #expect(try metrics.expectCounter("bureau_bus_publish_requests_total").totalValue == 4)
        #expect(outcomes("committed") == 1)
        #expect(outcomes("duplicate") == 1)
        #expect(outcomes("rejected", PublishRejectionCode.tooLarge.rawValue) == 1)
        #expect(outcomes("rejected", PublishRejectionCode.notStored.rawValue) == 2)
        #expect(try metrics.expectCounter("bureau_bus_store_errors_total", [("kind", "refused")]).totalValue == 1)
        #expect(try metrics.expectCounter("bureau_bus_events_committed_total").totalValue == 1)
    }

    /// A catch-up read the log cannot serve (a damaged record) is answered `read-failed` and
    /// counted as a store error, so that an operator sees the store failing readers.
    @Test func aCatchUpReadThatFailsIsCountedAsAStoreError() async throws {
        let metrics = TestMetrics()
        let bus = try await TestBus { $0.metricsFactory = metrics }
        let client = try bus.client()
        defer { client.close() }
        _ = try await client.publish((1...3).map { Self.event($0, bytes: 200) })
        // Given the last record's body damaged on disk, under the running daemon
        let directory = bus.location.logDirectory
        let segment = try #require(Files.list(directory).filter { $0.hasSuffix(".seg") }.sorted().last)
        let path = directory + "/" + segment
        let offset = Files.size(path) - 50
        let byte = try #require(FileManager.default.contents(atPath: path)?[Int(offset)])
        try Files.overwrite(path, at: offset, with: [byte ^ 0xFF])
        // When a reader asks for the log from the start
        let socket = try BusDaemonTests.rawDealer(to: bus.location.ipcEndpoints.read)
        defer { socket.close() }
        try socket.send(multipart: try BusDaemonTests.readRequest(after: 0, batched: true, id: 9))
        let reply = try #require(try await socket.nextMessage())
        // Then it is told the read failed, and the store error is counted
        #expect(String(decoding: reply[1], as: UTF8.self) == WireProtocol.error)
        #expect(try Bureau_Bus_ErrorReply(serializedBytes: reply[3]).code == BusErrorCode.readFailed.rawValue)
        #expect(try metrics.expectCounter("bureau_bus_store_errors_total", [("kind", "read")]).totalValue == 1)
    }
}
