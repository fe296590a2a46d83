import Logging
import Metrics
import OTLPTracing
import Synchronization

/// Whether this process's traces reach their collector, from what the exporter says of each
/// export: a failed export is counted (`bureau_trace_exports_failed_total`) and said once in the
/// process's log, and so is the first export that succeeds after failures. The process goes on
/// either way: traces are never worth stopping for.
final class TraceExportHealth: Sendable {
    private struct State {
        var failed = 0
        var exported = 0
        var failing = false
    }

    private let state = Mutex(State())
    private let logger: Logger
    private let endpoint: String
    private let failures = Counter(label: "bureau_trace_exports_failed_total")

    /// Its metric's help text, for the exporter and README's reference.
    static let help: [String: String] = [
        "bureau_trace_exports_failed_total":
            "Batches of spans the OTLP exporter could not deliver to its collector; the process goes on."
    ]

    init(endpoint: String, logger: Logger) {
        self.endpoint = endpoint
        self.logger = logger
    }

    /// Exports that failed so far.
    var failedExports: Int { state.withLock { $0.failed } }
    /// Exports that succeeded so far.
    var exports: Int { state.withLock { $0.exported } }

    /// Notes what became of one export.
    func note(_ outcome: OTLPSpanExporter.Outcome) {
        switch outcome {
        case .failed(let spans, let reason):
            failures.increment()
            let first = state.withLock { state in
                state.failed += 1
                defer { state.failing = true }
                return !state.failing
            }
            guard first else { return }
            // Error level: the capability is gone until an export succeeds again.
            logger.error(
                "traces: cannot export spans; going on without them, and counting failed exports",
                metadata: [
                    "traces.endpoint": "\(endpoint)", "traces.error": "\(reason)", "traces.spans_lost": "\(spans)",
                ])
        case .exported:
            let failedBefore = state.withLock { state in
                state.exported += 1
                defer { state.failing = false }
                return state.failing ? state.failed : 0
            }
            guard failedBefore > 0 else { return }
            logger.notice(
                "traces: exporting spans again", metadata: ["traces.failed_exports": "\(failedBefore)"])
        }
    }

    /// Says how many exports failed in all, and how many spans found the queue full, if any: at
    /// the process's end.
    func summarize(droppedSpans: Int) {
        let (failed, exported) = state.withLock { ($0.failed, $0.exported) }
        if failed > 0 {
            logger.notice(
                "traces: some exports failed",
                metadata: ["traces.failed_exports": "\(failed)", "traces.exports": "\(exported)"])
        }
        if droppedSpans > 0 {
            logger.notice(
                "traces: some spans were dropped, the exporter's queue being full (OTEL_BSP_MAX_QUEUE_SIZE)",
                metadata: ["traces.dropped_spans": "\(droppedSpans)"])
        }
    }
}
