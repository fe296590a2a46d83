import Bus
import Foundation
import Guards
import Logging
import OTLPTracing
import Tracing

/// This process's spans on their way to an OpenTelemetry collector: an ``OTLPTracer``
/// bootstrapped as the tracer of ``InstrumentationSystem``, its exporter running in the
/// background until ``finish(within:)``.
final class TraceExport: Sendable {
    private let exporter: OTLPSpanExporter
    private let running: Task<Void, Never>
    let health: TraceExportHealth

    private init(exporter: OTLPSpanExporter, health: TraceExportHealth) {
        self.exporter = exporter
        self.health = health
        running = Task { await exporter.run() }
    }

    /// Bootstraps the tracer and starts exporting when the environment names a collector, as
    /// OpenTelemetry's SDKs read it, and turns tracing on; nil otherwise, or when a variable's
    /// value cannot be used (said in the log: the process goes on without traces). Called once
    /// per process.
    static func start(
        process: String, logger: Logger, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> TraceExport? {
        let configuration: OTLPConfiguration
        do {
            guard
                let read = try OTLPConfiguration(
                    environment: environment, serviceName: process,
                    resource: ["service.namespace": "bureau", "bureau.process": process])
            else { return nil }
            configuration = read
        } catch {
            logger.error("traces: cannot export spans; going on without them", metadata: ["traces.error": "\(error)"])
            return nil
        }
        let health = TraceExportHealth(endpoint: configuration.endpoint, logger: logger)
        let exporter = OTLPSpanExporter(configuration: configuration) { health.note($0) }
        InstrumentationSystem.bootstrap(OTLPTracer(exporter: exporter))
        BusTracing.turnOn()
        logger.info(
            "traces: exporting spans over OTLP/HTTP", metadata: ["traces.endpoint": "\(configuration.endpoint)"])
        return TraceExport(exporter: exporter, health: health)
    }

    /// Stops making spans and sends those still waiting, waiting at most `within` for the
    /// collector; then says how many exports failed and how many spans were dropped, if any.
    func finish(within: Duration = .seconds(3)) async {
        BusTracing.turnOff()
        exporter.shutdown()
        let running = self.running
        let ended: Void? = await Timeout.result(within: within) { await running.value }
        if ended == nil { running.cancel() }
        health.summarize(droppedSpans: exporter.dropped)
    }
}
