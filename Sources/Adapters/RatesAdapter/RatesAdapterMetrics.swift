import Metrics

/// The rates adapter's metrics, through swift-metrics: each fetch's duration, fetches that
/// failed by reason, and fixings published. Handles made once.
public struct RatesAdapterMetrics: Sendable {
    let fetch: Timer
    let published: Counter
    private let failures: [String: Counter]

    /// The reasons a fetch fails for, as the `reason` label takes them.
    static let reasons = [
        "http-status", "timeout", "refused", "unreachable", "too-large", "malformed-document", "publish-refused",
    ]

    /// Metric names and what they mean (README, "Watching it run").
    public static let help: [String: String] = [
        "bureau_rates_fetch_seconds": "How long each fetch of the rates source took, failed ones included.",
        "bureau_rates_fetch_failures_total":
            "Fetches of the rates source that failed, by reason (http-status, timeout, refused, unreachable, too-large, malformed-document, publish-refused).",
        "bureau_rates_published_total": "Fixings the rates adapter published.",
    ]

    public init(factory: any MetricsFactory = MetricsSystem.factory) {
        fetch = Timer(label: "bureau_rates_fetch_seconds", factory: factory)
        published = Counter(label: "bureau_rates_published_total", factory: factory)
        failures = Dictionary(
            uniqueKeysWithValues: Self.reasons.map {
                (
                    $0,
                    Counter(label: "bureau_rates_fetch_failures_total", dimensions: [("reason", $0)], factory: factory)
                )
            })
    }

    func failed(_ reason: String) {
        failures[reason]?.increment()
    }

    /// A fetch error's `reason` label; nil for a fetch abandoned (the adapter is stopping).
    static func reason(of error: FetchError) -> String? {
        switch error {
        case .status: "http-status"
        case .timedOut: "timeout"
        case .refused: "refused"
        case .unreachable: "unreachable"
        case .tooLarge: "too-large"
        case .cancelled: nil
        }
    }
}
