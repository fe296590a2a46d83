import BookingAdapter
import Bus
import CoreMetrics
import PostgresStore
import Prometheus
import RatesAdapter
import Supervisor
import ZeroMQBus

/// swift-metrics' factory for a process, backed by swift-prometheus' registry: what the
/// composition root bootstraps, so that what the libraries record through swift-metrics is
/// served at `/metrics`. Unlike swift-prometheus' own factory, it gives every metric its help
/// text (`promtool check metrics` wants one) and each timer the buckets its durations need.
final class PrometheusFactory: MetricsFactory {
    let registry: PrometheusCollectorRegistry

    init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
    }

    /// Every metric Bureau records and what it means: the metric reference (README, "Watching
    /// it run"), gathered from the types that record them.
    static let help: [String: String] = [
        BusDaemon.metricHelp, ConsumerMetrics.help, RatesAdapterMetrics.help, BookingAdapterMetrics.help,
        SupervisorMetrics.help, MetricsEndpoint.help, TraceExportHealth.help, PostgresStoreMetrics.help,
    ].reduce(into: [:]) { all, part in all.merge(part) { first, _ in first } }

    /// Timers' buckets: fdatasyncs and acknowledgements take microseconds to tens of
    /// milliseconds, HTTP calls milliseconds to seconds.
    static let fastBuckets: [Duration] = [
        .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1),
        .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .seconds(1),
    ]
    static let callBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5),
        .seconds(10), .seconds(30),
    ]
    /// Batch sizes, in events.
    static let sizeBuckets: [Double] = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000]

    /// The metric's name as it is, with its help text.
    private func describe(_ label: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: label, unitName: "", helpText: Self.help[label] ?? "")
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(descriptor: describe(label), labels: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(descriptor: describe(label), labels: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return registry.makeGauge(descriptor: describe(label), labels: dimensions) }
        return registry.makeValueHistogram(descriptor: describe(label), labels: dimensions, buckets: Self.sizeBuckets)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(descriptor: describe(label), labels: dimensions)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        let buckets = label.hasPrefix("bureau_bus_") ? Self.fastBuckets : Self.callBuckets
        return registry.makeDurationHistogram(descriptor: describe(label), labels: dimensions, buckets: buckets)
    }

    func destroyCounter(_ handler: any CounterHandler) {
        if let counter = handler as? Prometheus.Counter { registry.unregisterCounter(counter) }
    }

    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        if let counter = handler as? Prometheus.Counter { registry.unregisterCounter(counter) }
    }

    func destroyRecorder(_ handler: any RecorderHandler) {
        if let gauge = handler as? Prometheus.Gauge {
            registry.unregisterGauge(gauge)
        } else if let histogram = handler as? ValueHistogram {
            registry.unregisterValueHistogram(histogram)
        }
    }

    func destroyMeter(_ handler: any MeterHandler) {
        if let gauge = handler as? Prometheus.Gauge { registry.unregisterGauge(gauge) }
    }

    func destroyTimer(_ handler: any TimerHandler) {
        if let histogram = handler as? DurationHistogram { registry.unregisterDurationHistogram(histogram) }
    }
}
