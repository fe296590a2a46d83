import ArgumentParser
import CoreMetrics
import Foundation
import Metrics
import Prometheus

/// `--metrics on|off`: whether the process records its metrics into swift-prometheus (as
/// `bureau` does by default) or into nothing, so that their cost is measured by running the
/// same benchmark both ways, in turn (BENCHMARKS.md, the "metrics on" rows).
enum MetricsChoice: String, ExpressibleByArgument, CaseIterable, Sendable {
    case on, off

    /// Bootstraps swift-metrics with Prometheus when on, and scrapes it once a second as a
    /// Prometheus would (the text made and dropped); does nothing when off.
    func bootstrap() {
        guard self == .on else { return }
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        Task.detached {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                _ = registry.emitToBuffer()
            }
        }
    }
}
