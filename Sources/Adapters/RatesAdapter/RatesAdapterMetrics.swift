import Metrics

/// The rates adapter's metrics, through swift-metrics: each fetch's duration, fetches that
/// failed by reason, and fixings published. Handles made once.
public struct RatesAdapterMetrics: Sendable {
    let fetch: Timer
    let published: Counter
    private let failures: [RatesFailure: Counter]

    /// Metric names and what they mean (README, "Watching it run").
    public static let help: [String: String] = [
        "bureau_rates_fetch_seconds": "How long each fetch of the rates source took, failed ones included.",
        "bureau_rates_fetch_failures_total":
            "Fetches of the rates source that failed, by reason ("
            + RatesFailure.allCases.map(\.label).joined(separator: ", ") + ").",
        "bureau_rates_published_total": "Fixings the rates adapter published.",
    ]

    public init(factory: any MetricsFactory = MetricsSystem.factory) {
        fetch = Timer(label: "bureau_rates_fetch_seconds", factory: factory)
        published = Counter(label: "bureau_rates_published_total", factory: factory)
        failures = Dictionary(
            uniqueKeysWithValues: RatesFailure.allCases.map {
                (
                    $0,
                    Counter(
                        label: "bureau_rates_fetch_failures_total", dimensions: [("reason", $0.label)], factory: factory
                    )
                )
            })
    }

    func failed(_ failure: RatesFailure) {
        failures[failure]?.increment()
    }
}
