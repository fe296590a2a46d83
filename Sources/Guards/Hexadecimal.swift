/// 64-bit numbers as hexadecimal text, as trace and span ids are written (W3C Trace Context).
public enum Hexadecimal {
    /// `value` as 16 lowercase hexadecimal digits.
    public static func digits(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Up to 16 hexadecimal digits as a number: lowercase only when `lowercaseOnly` (as a
    /// `traceparent` header must be written), either case otherwise; nil for anything else
    /// (no sign, no prefix, no space).
    public static func value(_ digits: some Collection<UInt8>, lowercaseOnly: Bool = false) -> UInt64? {
        guard !digits.isEmpty, digits.count <= 16 else { return nil }
        var value: UInt64 = 0
        for digit in digits {
            let nibble: UInt8
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F") where !lowercaseOnly: nibble = digit - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt64(nibble)
        }
        return value
    }
}
