import ArgumentParser
import Bus
import Foundation
import Logging
import ServiceLifecycle

/// Where a process exports its traces: over OTLP/HTTP when `--otlp-endpoint` or OpenTelemetry's
/// `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) names a collector;
/// nowhere otherwise, and then nothing of tracing runs.
struct TraceOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Export traces over OTLP/HTTP to this collector, e.g. http://127.0.0.1:4318; processes this one starts export there too. (default: $OTEL_EXPORTER_OTLP_ENDPOINT; no traces when neither is set)",
            valueName: "url"))
    var otlpEndpoint: String?

    func validate() throws {
        if let otlpEndpoint, URL(string: otlpEndpoint)?.scheme.map({ ["http", "https"].contains($0) }) != true {
            throw ValidationError("--otlp-endpoint takes an http:// or https:// URL, not '\(otlpEndpoint)'")
        }
    }

    /// Has the processes this one starts export where `--otlp-endpoint` says (`bureau up`).
    func passOn() {
        if let otlpEndpoint { setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlpEndpoint, 1) }
    }

    /// Runs `body` with this process's spans exported, when an endpoint is set, then sends what
    /// is left (bounded: a collector that does not answer does not hold the process's end).
    func exporting<T>(process: String, global: GlobalOptions, _ body: () async throws -> T) async throws -> T {
        // The standard variable, so that the exporter and the processes started from here read it.
        passOn()
        guard let export = TraceExport.start(process: process, logger: global.logger("bureau.traces")) else {
            return try await body()
        }
        do {
            let result = try await body()
            await export.finish()
            return result
        } catch {
            await export.finish()
            throw error
        }
    }
}
