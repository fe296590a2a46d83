extension Duration {
    /// The duration in seconds, fractions included: what a rate, a pace or a report in seconds
    /// needs. The Double nearest the duration for a whole number of nanoseconds up to 104 days:
    /// 1118 ms is 1.118, as `1.118` writes it.
    public var inSeconds: Double { fractional(perSecond: 1) }

    /// The duration in milliseconds, fractions included: a latency reported in milliseconds
    /// (1250 µs is 1.25), as exact as ``inSeconds``.
    public var inFractionalMilliseconds: Double { fractional(perSecond: 1000) }

    /// Whole seconds, the rest dropped (toward zero): a count of seconds for a message or a
    /// configuration file that takes whole seconds.
    public var inWholeSeconds: Int64 { components.seconds }

    /// Whole nanoseconds, the rest dropped (toward zero): a timestamp written into a payload.
    ///
    /// Saturates at `Int64.min` and `Int64.max` beyond 292 years either way instead of trapping.
    public var inNanoseconds: Int64 { whole(perSecond: 1_000_000_000) }

    /// Whole microseconds, the rest dropped (toward zero): a latency on the wire or in a
    /// histogram that counts microseconds.
    ///
    /// Saturates at `Int64.min` and `Int64.max` beyond 292,000 years either way instead of trapping.
    public var inMicroseconds: Int64 { whole(perSecond: 1_000_000) }

    /// Whole milliseconds, the rest dropped (toward zero): what an API that takes milliseconds
    /// (a socket option, an HTTP client's timeout, a log line) needs.
    ///
    /// Saturates at `Int64.min` and `Int64.max` instead of trapping, for durations beyond
    /// 292 million years that no bounded input reaches.
    public var inMilliseconds: Int64 { whole(perSecond: 1000) }

    /// The duration in units of which a second holds `perSecond` (1 or 1000), fractions included.
    ///
    /// Within 104 days either way the whole nanoseconds fit a Double exactly, so the result is
    /// one division, rounded once: adding the seconds and their fraction, each rounded, gave
    /// 1.1179999999999999 for 1118 ms. Beyond, nanoseconds are far below a Double's precision.
    private func fractional(perSecond: Double) -> Double {
        let (seconds, attoseconds) = components
        guard seconds.magnitude < 9_007_199 else { return (Double(seconds) + Double(attoseconds) / 1e18) * perSecond }
        return Double(seconds * 1_000_000_000 + attoseconds / 1_000_000_000) / (1e9 / perSecond)
    }

    /// Whole units of which a second holds `perSecond` (a power of ten up to 10^18), the rest
    /// dropped toward zero, saturating instead of trapping.
    private func whole(perSecond: Int64) -> Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: perSecond)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (total, overflowAgain) = whole.addingReportingOverflow(
            attoseconds / (1_000_000_000_000_000_000 / perSecond))
        guard !overflowAgain else { return seconds < 0 ? .min : .max }
        return total
    }
}

extension Duration {
    /// `seconds` as a duration, for a figure read from elsewhere (JSON, a report): NaN is
    /// zero, and anything beyond a billion years either way is cut to it, where
    /// `Duration.seconds(_:)` would trap.
    public static func seconds(saturating seconds: Double) -> Duration {
        guard !seconds.isNaN else { return .zero }
        return .seconds(min(max(seconds, -Self.saturationSeconds), Self.saturationSeconds))
    }

    /// `milliseconds` as a duration, as ``seconds(saturating:)`` does for seconds.
    public static func milliseconds(saturating milliseconds: Double) -> Duration {
        guard !milliseconds.isNaN else { return .zero }
        return .milliseconds(min(max(milliseconds, -Self.saturationSeconds * 1000), Self.saturationSeconds * 1000))
    }

    /// `microseconds` as a duration, as ``seconds(saturating:)`` does for seconds.
    public static func microseconds(saturating microseconds: Double) -> Duration {
        guard !microseconds.isNaN else { return .zero }
        return .microseconds(
            min(max(microseconds, -Self.saturationSeconds * 1_000_000), Self.saturationSeconds * 1_000_000))
    }

    /// A billion years, in seconds: far beyond anything measured, far within what a duration holds.
    private static let saturationSeconds = 3.2e16
}
