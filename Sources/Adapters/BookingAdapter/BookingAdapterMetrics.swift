import Metrics

/// The booking adapter's metrics, through swift-metrics: each call's duration, and calls that
/// failed by reason. Handles made once. What it consumes and publishes is counted by its
/// `ConsumerMetrics`, as for every consumer.
public struct BookingAdapterMetrics: Sendable {
    private let calls: [String: Timer]
    private let failures: [String: Counter]

    /// Metric names and what they mean (README, "Watching it run").
    public static let help: [String: String] = [
        "bureau_booking_call_seconds": "How long each call to the booking service took (book, cancel, resolve).",
        "bureau_booking_call_failures_total":
            "Calls to the booking service that failed, by reason: transient (retried), refused (a 4xx), unknown (resolved with the service), invalid-request (not sent: the adapter could not make it).",
    ]

    public init(factory: any MetricsFactory = MetricsSystem.factory) {
        calls = Dictionary(
            uniqueKeysWithValues: ["book", "cancel", "resolve"].map {
                ($0, Timer(label: "bureau_booking_call_seconds", dimensions: [("call", $0)], factory: factory))
            })
        failures = Dictionary(
            uniqueKeysWithValues: ["transient", "refused", "unknown", "invalid-request"].map {
                (
                    $0,
                    Counter(label: "bureau_booking_call_failures_total", dimensions: [("reason", $0)], factory: factory)
                )
            })
    }

    func called(_ call: String, took duration: Duration) {
        calls[call]?.record(duration: duration)
    }

    func failed(_ error: BookingError) {
        switch error {
        case .transient: failures["transient"]?.increment()
        case .refused: failures["refused"]?.increment()
        case .unknown: failures["unknown"]?.increment()
        case .invalidRequest: failures["invalid-request"]?.increment()
        }
    }
}
