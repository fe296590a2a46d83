import EventLog
import Foundation
import MetricsTestKit
import PostgresStore
import TestSupport
import Testing

/// The PostgreSQL store's connections, made again after a failover or a restart, are counted
/// where an operator looks (`bureau_store_reconnects_total`), by what they serve.
// Statements wait for the server on the caller's thread: off the cooperative pool.
@Suite(.requiresPostgreSQL, .ownThreads)
struct PostgresStoreMetricsTests {
    struct Counter: Codable, Equatable, Sendable {
        var count: Int
    }

    @Test func eachConnectionMadeAgainIsCountedByWhatItServes() throws {
        let url = try TestPostgres.database()
        let database = try #require(url.split(separator: "/").last.map(String.init))
        let metrics = TestMetrics()
        let snapshots = try PostgresSnapshotStore(
            url: PostgresStoreURL(parsing: url), metricsFactory: metrics, logger: TestLogging.logger("snapshots"))
        let reader = try PostgresLogReader(
            url: PostgresStoreURL(parsing: url), metricsFactory: metrics, logger: TestLogging.logger("reader"))
        let snapshotReconnects = try metrics.expectCounter("bureau_store_reconnects_total", [("kind", "snapshots")])
        let readerReconnects = try metrics.expectCounter("bureau_store_reconnects_total", [("kind", "log-reader")])
        // Given both connected, nothing is counted: connecting the first time is no reconnection
        try snapshots.save(Snapshot(module: "m", stateVersion: 1, position: 1, state: Counter(count: 1)))
        #expect(try reader.head() == 0)
        #expect(snapshotReconnects.totalValue == 0 && readerReconnects.totalValue == 0)

        // When the server ends their connections, each goes on on a new one, counted once
        try TestPostgres.server().endConnections(to: database)
        try snapshots.save(Snapshot(module: "m", stateVersion: 1, position: 2, state: Counter(count: 2)))
        #expect(try reader.head() == 0)
        #expect(snapshotReconnects.totalValue == 1)
        #expect(readerReconnects.totalValue == 1)

        // And again
        try TestPostgres.server().endConnections(to: database)
        #expect(snapshots.load(Counter.self, module: "m", stateVersion: 1, rejected: { _ in })?.position == 2)
        #expect(snapshotReconnects.totalValue == 2)
        #expect(readerReconnects.totalValue == 1, "the reader has not been used since")
    }
}
