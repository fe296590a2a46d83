import Logging
import Metrics
import Synchronization

/// Whether this process's traces reach their collector, read off swift-otel's own diagnostic
/// log: a failed export is counted (`bureau_trace_exports_failed_total`) and said once in the
/// process's log, and so is the first export that succeeds after failures. The process goes
/// on either way: traces are never worth stopping for.
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

    /// Notes a message of swift-otel's diagnostic log. Its messages are matched by their text:
    /// TracingTests' unreachable collector fails if a new swift-otel words them otherwise.
    func note(_ event: LogEvent) {
        switch event.message.description {
        case "Failed to export batch.":
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
                    "traces.endpoint": "\(endpoint)", "traces.error": "\(event.error.map { "\($0)" } ?? "unknown")",
                ])
        case "Exported batch.":
            let failedBefore = state.withLock { state in
                state.exported += 1
                defer { state.failing = false }
                return state.failing ? state.failed : 0
            }
            guard failedBefore > 0 else { return }
            logger.notice(
                "traces: exporting spans again", metadata: ["traces.failed_exports": "\(failedBefore)"])
        default:
            if event.level >= .warning {
                logger.log(
                    level: event.level, "traces: \(event.message)",
                    metadata: event.error.map { ["traces.error": "\($0)"] })
            }
        }
    }

    /// Says how many exports failed in all, if any: at the process's end.
    func summarize() {
        let (failed, exported) = state.withLock { ($0.failed, $0.exported) }
        guard failed > 0 else { return }
        logger.notice(
            "traces: some exports failed",
            metadata: ["traces.failed_exports": "\(failed)", "traces.exports": "\(exported)"])
    }

    /// The log handler that swift-otel's diagnostic logger writes to.
    var handler: some LogHandler { DiagnosticHandler(health: self) }

    private struct DiagnosticHandler: LogHandler {
        let health: TraceExportHealth
        var metadata: Logger.Metadata = [:]
        var metadataProvider: Logger.MetadataProvider?
        // Debug, for "Exported batch.": the one sign that exports work again.
        var logLevel: Logger.Level = .debug

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            health.note(event)
        }
    }
}
