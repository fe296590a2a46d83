extension Duration {
    /// Seconds as a person writes them, without the unit: "2", "0.5", "2.25" (to the
    /// millisecond, no trailing zeros); with `tenths`, always one decimal, for reports of the
    /// time something took: "1.5", "10.0". The one duration formatter (ARCHITECTURE.md).
    public func secondsText(tenths: Bool = false) -> String {
        let sign = self < .zero ? "-" : ""
        if tenths {
            let count = Int64((abs(inSeconds) * 10).rounded())
            return "\(sign)\(count / 10).\(count % 10)"
        }
        let milliseconds = inMilliseconds.magnitude
        let fraction = milliseconds % 1000
        guard fraction != 0 else { return "\(sign)\(milliseconds / 1000)" }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 3 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(sign)\(milliseconds / 1000).\(digits)"
    }
}
