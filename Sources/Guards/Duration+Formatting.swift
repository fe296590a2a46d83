extension Duration {
    /// Seconds as a person writes them, without the unit: "2", "0.5", "2.25" (to the
    /// millisecond, no trailing zeros, the rest dropped); with `decimals`, always that many
    /// decimals, rounded half away from zero, for reports of the time something took:
    /// `decimals: 1` gives "1.5", "10.0"; `decimals: 3` gives "0.250" (JUnit's `time`).
    ///
    /// The one duration formatter (CONTRIBUTING.md, "One of each"), with
    /// ``millisecondsText(decimals:)``, ``microsecondsText(decimals:)``, ``compactText()`` and
    /// ``scaledText()``.
    public func secondsText(decimals: Int? = nil) -> String {
        let sign = self < .zero ? "-" : ""
        let (seconds, attoseconds) = components
        guard let decimals else {
            let milliseconds = inMilliseconds.magnitude
            let fraction = milliseconds % 1000
            guard fraction != 0 else { return "\(sign)\(milliseconds / 1000)" }
            var digits = Self.padded(fraction, to: 3)
            while digits.hasSuffix("0") { digits.removeLast() }
            return "\(sign)\(milliseconds / 1000).\(digits)"
        }
        return sign
            + Self.fixed(
                whole: seconds.magnitude, remainder: attoseconds.magnitude, per: 1_000_000_000_000_000_000,
                decimals: decimals)
    }

    /// Milliseconds with `decimals` decimals, without the unit: "0.42", "12.35" (rounded half
    /// away from zero): a latency or an fdatasync in a report.
    public func millisecondsText(decimals: Int) -> String {
        unitsText(perSecond: 1000, decimals: decimals)
    }

    /// Microseconds with `decimals` decimals, without the unit: "0.42", "12.35" (rounded half
    /// away from zero): the CPU time an event took in a benchmark.
    public func microsecondsText(decimals: Int) -> String {
        unitsText(perSecond: 1_000_000, decimals: decimals)
    }

    /// Units of which a second holds `perSecond` (a power of ten up to 10^18) with `decimals`
    /// decimals, without the unit.
    private func unitsText(perSecond: UInt64, decimals: Int) -> String {
        let sign = self < .zero ? "-" : ""
        let (seconds, attoseconds) = components
        let perUnit = 1_000_000_000_000_000_000 / perSecond
        let (scaled, overflow) = seconds.magnitude.multipliedReportingOverflow(by: perSecond)
        let (whole, overflowAgain) = scaled.addingReportingOverflow(attoseconds.magnitude / perUnit)
        guard !overflow, !overflowAgain else { return sign + "\(UInt64.max)" }
        return sign
            + Self.fixed(whole: whole, remainder: attoseconds.magnitude % perUnit, per: perUnit, decimals: decimals)
    }

    /// Whole units, the rest dropped, for a column of uptimes and ages: "45s", "5m3s", "2h5m"
    /// (an hour or more shows hours and minutes only).
    public func compactText() -> String {
        let sign = self < .zero ? "-" : ""
        let total = components.seconds.magnitude
        if total < 60 { return "\(sign)\(total)s" }
        if total < 3600 { return "\(sign)\(total / 60)m\(total % 60)s" }
        return "\(sign)\(total / 3600)h\(total / 60 % 60)m"
    }

    /// ``secondsText(decimals:)`` with one decimal when `tenths`, else with none fixed.
    public func secondsText(tenths: Bool) -> String {
        secondsText(decimals: tenths ? 1 : nil)
    }

    /// In the unit that suits its size, rounded to the microsecond first: "412 µs" under a
    /// millisecond, "3.1 ms" under a second, "2.41 s" from then on (a hop in a trace).
    public func scaledText() -> String {
        let sign = self < .zero ? "-" : ""
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.magnitude.multipliedReportingOverflow(by: 1_000_000)
        let (micros, overflowAgain) = whole.addingReportingOverflow(
            (attoseconds.magnitude + 500_000_000_000) / 1_000_000_000_000)
        guard !overflow, !overflowAgain else { return sign + compactText() }
        if micros < 1000 { return "\(sign)\(micros) µs" }
        if micros < 1_000_000 {
            return sign + Self.fixed(whole: micros / 1000, remainder: micros % 1000, per: 1000, decimals: 1) + " ms"
        }
        return sign + Self.fixed(whole: micros / 1_000_000, remainder: micros % 1_000_000, per: 1_000_000, decimals: 2)
            + " s"
    }

    /// `whole` units and `remainder` parts of a unit that has `per` parts, to `decimals`
    /// decimals (at most 18), rounded half away from zero.
    private static func fixed(whole: UInt64, remainder: UInt64, per: UInt64, decimals: Int) -> String {
        let decimals = min(max(decimals, 0), 18)
        var scale: UInt64 = 1
        for _ in 0..<decimals { scale *= 10 }
        // More decimals than the unit has parts: exact, nothing to round.
        guard scale <= per else { return "\(whole)." + padded(remainder * (scale / per), to: decimals) }
        let step = per / scale
        var whole = whole
        var fraction = (remainder + step / 2) / step
        if fraction == scale {
            whole = whole == .max ? whole : whole + 1
            fraction = 0
        }
        return decimals == 0 ? "\(whole)" : "\(whole)." + padded(fraction, to: decimals)
    }

    private static func padded(_ value: UInt64, to digits: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
