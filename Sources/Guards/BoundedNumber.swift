/// Numbers a person gives as text — a command-line option, a `--set` value, a field of a YAML
/// file — read only when they are finite and within the range that makes sense for them.
///
/// The one place where the tool turns such text into numbers. NaN, infinities, values too
/// large for their type, values whose use would overflow (a millisecond count turned into a
/// `Duration` and then doubled, a MiB count shifted into bytes), and zero or negatives where
/// they make no sense are refused with a ``Refusal`` that quotes the value and says what is
/// expected; the caller adds the name of the option, setting or field. Ranges are chosen by
/// the caller, so every use states its bounds where the input is declared.
public enum BoundedNumber {
    /// Why a number was refused: the value as given, what is wrong with it and what is expected,
    /// e.g. `'nan' is not a number (give one from 0 to 1)`.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// The text as given.
        public let value: String
        /// What is wrong, e.g. "is too large".
        public let problem: String
        /// What would be accepted, e.g. "a whole number from 1 to 60000".
        public let expected: String

        public init(value: String, problem: String, expected: String) {
            self.value = value
            self.problem = problem
            self.expected = expected
        }

        public var description: String { "'\(value)' \(problem) (give \(expected))" }
    }

    /// The whole number `text` spells, if it is within `range`.
    public static func integer<T: FixedWidthInteger>(
        _ text: String, in range: ClosedRange<T>
    ) throws(Refusal) -> T {
        let expected = "a whole number from \(range.lowerBound) to \(range.upperBound)"
        guard let value = T(text) else {
            let digits = text.drop(while: { $0 == "+" || $0 == "-" })
            let problem =
                !digits.isEmpty && text.count - digits.count <= 1 && digits.allSatisfy(\.isASCII)
                    && digits.allSatisfy(\.isNumber)
                ? (text.hasPrefix("-") ? "is too small" : "is too large") : "is not a whole number"
            throw Refusal(value: text, problem: problem, expected: expected)
        }
        guard range.contains(value) else { throw Refusal(value: text, problem: "is out of range", expected: expected) }
        return value
    }

    /// The finite number `text` spells (digits, a point, an exponent), if it is within `range`.
    public static func decimal(_ text: String, in range: ClosedRange<Double>) throws(Refusal) -> Double {
        let expected = "a number from \(plain(range.lowerBound)) to \(plain(range.upperBound))"
        // Swift's Double(_:) also reads "nan", "inf", "infinity" and hexadecimal: none is a
        // number a person means here.
        guard text.allSatisfy({ $0.isASCII && ($0.isNumber || "+-.eE".contains($0)) }), let value = Double(text)
        else {
            let lowered = text.lowercased()
            let problem =
                ["inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"].contains(lowered)
                ? "is not a finite number" : "is not a number"
            throw Refusal(value: text, problem: problem, expected: expected)
        }
        guard value.isFinite else {
            throw Refusal(value: text, problem: value > 0 ? "is too large" : "is too small", expected: expected)
        }
        guard range.contains(value) else { throw Refusal(value: text, problem: "is out of range", expected: expected) }
        return value
    }

    /// A duration given as whole milliseconds within `range`.
    public static func milliseconds(_ text: String, in range: ClosedRange<Int>) throws(Refusal) -> Duration {
        .milliseconds(try integer(text, in: range))
    }

    /// A duration given as seconds (fractions allowed) within `range`, to the millisecond.
    public static func seconds(_ text: String, in range: ClosedRange<Double>) throws(Refusal) -> Duration {
        duration(seconds: try decimal(text, in: range))
    }

    /// `seconds` as a `Duration`, to the millisecond; NaN, infinities and values beyond a
    /// hundred years (which no bounded input reaches) are clamped instead of trapping.
    public static func duration(seconds: Double) -> Duration {
        let limit = 100 * 365 * 86_400.0
        let clamped = seconds.isNaN ? 0 : min(max(seconds, -limit), limit)
        return .milliseconds(Int64((clamped * 1000).rounded()))
    }

    /// For `@Option(transform:)` and other parsers that take a closure: reads whole numbers
    /// within `range`.
    public static func integers<T: FixedWidthInteger & Sendable>(
        in range: ClosedRange<T>
    ) -> @Sendable (String) throws -> T {
        { text in try integer(text, in: range) }
    }

    /// For `@Option(transform:)`: reads finite numbers within `range`.
    public static func decimals(in range: ClosedRange<Double>) -> @Sendable (String) throws -> Double {
        { text in try decimal(text, in: range) }
    }

    /// `value` without a needless ".0": 1 rather than 1.0, 0.001 as is.
    static func plain(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
