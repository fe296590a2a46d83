import Metrics

/// What the PostgreSQL store's connections record through swift-metrics: each connection made
/// again after one ended (a server restarted, promoted away or cut off), by what it serves.
public enum PostgresStoreMetrics {
    /// Metric names and what they mean: the metric reference (README, "Watching it run").
    public static let help: [String: String] = [
        "bureau_store_reconnects_total":
            "Times a connection to the PostgreSQL store was made again after it ended (a failover, a restart, a cut), by what it serves: log-reader (the bus's catch-up reads, the log tools) or snapshots (a reducer host's)."
    ]

    /// The counter of reconnections of a connection serving `kind` (`log-reader`, `snapshots`).
    static func reconnects(_ kind: String, factory: (any MetricsFactory)?) -> Counter {
        Counter(
            label: "bureau_store_reconnects_total", dimensions: [("kind", kind)],
            factory: factory ?? MetricsSystem.factory)
    }
}
