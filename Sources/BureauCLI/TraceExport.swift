import Bus
import Foundation
import Guards
import Logging
import OTel
import ServiceLifecycle

/// This process's spans on their way to an OpenTelemetry collector: swift-otel bootstrapped as
/// the tracer of ``InstrumentationSystem`` (traces only: metrics and logs are not its), its
/// batch processor and OTLP/HTTP exporter running in the background until ``finish()``.
final class TraceExport: Sendable {
    private let group: ServiceGroup
    private let running: Task<Void, Never>
    let health: TraceExportHealth

    private init(group: ServiceGroup, health: TraceExportHealth, logger: Logger) {
        self.group = group
        self.health = health
        running = Task {
            do {
                try await group.run()
            } catch {
                logger.warning("traces: the exporter stopped", metadata: ["traces.error": "\(error)"])
            }
        }
    }

    /// Where spans go, from the environment as OpenTelemetry's SDKs read it; nil for nowhere.
    static func endpoint(in environment: [String: String]) -> String? {
        guard environment["OTEL_SDK_DISABLED"]?.lowercased() != "true",
            environment["OTEL_TRACES_EXPORTER"].map({ $0.lowercased() == "none" }) != true
        else { return nil }
        for key in ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"] {
            if let value = environment[key], !value.isEmpty { return value }
        }
        return nil
    }

    /// Bootstraps the tracer and starts exporting when the environment names an endpoint, and
    /// turns tracing on; nil otherwise, or when the configuration is refused (said in the log:
    /// the process goes on without traces). Called once per process.
    static func start(
        process: String, logger: Logger, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> TraceExport? {
        guard let endpoint = endpoint(in: environment) else { return nil }
        let health = TraceExportHealth(endpoint: endpoint, logger: logger)
        var configuration = OTel.Configuration.default
        configuration.serviceName = process
        configuration.resourceAttributes = ["service.namespace": "bureau", "bureau.process": process]
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        configuration.traces.exporter = .otlp
        configuration.traces.otlpExporter.protocol = .httpProtobuf
        configuration.diagnosticLogger = .custom(Logger(label: "bureau.traces.otel") { _ in health.handler })
        configuration.diagnosticLogLevel = .debug
        let service: any Service
        do {
            service = try OTel.bootstrap(configuration: configuration, environment: environment)
        } catch {
            logger.error(
                "traces: cannot export spans; going on without them",
                metadata: ["traces.endpoint": "\(endpoint)", "traces.error": "\(error)"])
            return nil
        }
        BusTracing.turnOn()
        logger.info("traces: exporting spans over OTLP/HTTP", metadata: ["traces.endpoint": "\(endpoint)"])
        let group = ServiceGroup(
            configuration: .init(services: [.init(service: service)], gracefulShutdownSignals: [], logger: logger))
        return TraceExport(group: group, health: health, logger: logger)
    }

    /// Stops making spans and sends those still buffered, waiting at most `within` for the
    /// collector; then says how many exports failed, if any.
    func finish(within: Duration = .seconds(3)) async {
        BusTracing.turnOff()
        await group.triggerGracefulShutdown()
        let running = self.running
        let ended: Void? = await Timeout.result(within: within) { await running.value }
        if ended == nil { running.cancel() }
        health.summarize()
    }
}
