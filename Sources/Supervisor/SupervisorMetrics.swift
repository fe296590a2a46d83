import Metrics
import Synchronization

/// The supervisor's metrics, through swift-metrics: each process up or not, its restarts and
/// its uptime, taken from ``Supervisor/rows`` when ``record(_:)`` is called (before each
/// scrape: they change with time alone). Handles made once per process.
public final class SupervisorMetrics: Sendable {
    /// nil: swift-metrics' bootstrapped factory as of the first ``record(_:)``.
    private let factory: (any MetricsFactory)?
    private let processes = Mutex<[String: Handles]>([:])

    private struct Handles: Sendable {
        let up: Gauge
        let uptime: Gauge
        let restarts: Counter
        var restartsCounted: Int
    }

    /// Metric names and what they mean (README, "Watching it run").
    public static let help: [String: String] = [
        "bureau_process_up": "1 while the supervisor's process is starting or ready, 0 otherwise.",
        "bureau_process_restarts_total": "Times the supervisor restarted the process.",
        "bureau_process_uptime_seconds": "How long the process's current run has lasted (0 while it is not running).",
    ]

    public init(factory: (any MetricsFactory)? = nil) {
        self.factory = factory
    }

    /// Sets each process's gauges and counts its restarts since the last call.
    public func record(_ rows: [Supervisor.Row]) {
        let factory = self.factory ?? MetricsSystem.factory
        processes.withLock { processes in
            for row in rows {
                var handles =
                    processes[row.name]
                    ?? Handles(
                        up: Gauge(label: "bureau_process_up", dimensions: [("process", row.name)], factory: factory),
                        uptime: Gauge(
                            label: "bureau_process_uptime_seconds", dimensions: [("process", row.name)],
                            factory: factory),
                        restarts: Counter(
                            label: "bureau_process_restarts_total", dimensions: [("process", row.name)],
                            factory: factory),
                        restartsCounted: 0)
                handles.up.record(row.state == .ready || row.state == .starting ? 1 : 0)
                handles.uptime.record(row.uptimeSeconds ?? 0)
                if row.restarts > handles.restartsCounted {
                    handles.restarts.increment(by: row.restarts - handles.restartsCounted)
                    handles.restartsCounted = row.restarts
                }
                processes[row.name] = handles
            }
        }
    }
}
