import Foundation

/// Decimal numbers as Bureau writes them on the wire: plain digits, an optional point, no
/// exponent, no grouping. Money is never a binary floating-point number.
public enum DecimalText {
    public enum Problem: Error, Equatable, CustomStringConvertible {
        case empty
        case notANumber(String)
        case tooLong(String)

        public var description: String {
            switch self {
            case .empty: "the number is empty"
            case .notANumber(let text): "'\(text)' is not a decimal number (digits, an optional '.', e.g. 250.50)"
            case .tooLong(let text): "'\(text.prefix(40))…' has too many digits"
            }
        }
    }

    /// Parses "123", "123.45", "-0.5", "0.000123". Returns the value and how many digits follow the point.
    public static func parse(_ text: String) throws(Problem) -> (value: Decimal, fractionDigits: Int) {
        guard !text.isEmpty else { throw .empty }
        guard text.utf8.count <= 40 else { throw .tooLong(text) }
        var digits = 0
        var fraction = -1
        for (index, character) in text.enumerated() {
            switch character {
            case "0"..."9":
                digits += 1
                if fraction >= 0 { fraction += 1 }
            case ".":
                guard fraction < 0 else { throw .notANumber(text) }
                fraction = 0
            case "-", "+":
                guard index == 0 else { throw .notANumber(text) }
            default:
                throw .notANumber(text)
            }
        }
        guard digits > 0, fraction != 0, let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
        else { throw .notANumber(text) }
        return (value, max(0, fraction))
    }

    /// `value` with exactly `scale` digits after the point, rounded half to even.
    public static func format(_ value: Decimal, scale: Int) -> String {
        let rounded = round(value, scale: scale)
        var text = rounded.description
        if text.hasPrefix("-") && rounded.isZero { text.removeFirst() }
        guard scale > 0 else { return text }
        let parts = text.split(separator: ".", maxSplits: 1)
        let fraction = parts.count > 1 ? String(parts[1]) : ""
        return String(parts[0]) + "." + fraction + String(repeating: "0", count: max(0, scale - fraction.count))
    }

    /// Rounds half to even ("banker's rounding") to `scale` digits after the point.
    public static func round(_ value: Decimal, scale: Int) -> Decimal {
        var input = value
        var result = Decimal()
        NSDecimalRound(&result, &input, scale, .bankers)
        return result
    }

    /// Rounds half to even to `digits` significant digits: 157.250307 → 157.250 for 6.
    public static func round(_ value: Decimal, significantDigits digits: Int) -> Decimal {
        guard !value.isZero else { return value }
        let magnitude = abs(value)
        var integerDigits = 0
        var power = Decimal(1)
        if magnitude >= 1 {
            while magnitude >= power {
                power *= 10
                integerDigits += 1
            }
        } else {
            power = Decimal(1) / 10
            while magnitude < power {
                power /= 10
                integerDigits -= 1
            }
        }
        return round(value, scale: digits - integerDigits)
    }

    /// The shortest plain text for `value` (no trailing zeros after the point).
    public static func plain(_ value: Decimal) -> String {
        value.description
    }
}
