/// What a parameter's value must look like.
public enum ParameterKind: Sendable, Equatable {
    /// Three letters, e.g. EUR (case does not matter).
    case currency
    /// A decimal number: digits and an optional point, e.g. 500.00.
    case decimal
    /// An identifier with a letter prefix and digits, e.g. R1042.
    case identifier(prefix: String)

    public var placeholder: String {
        switch self {
        case .currency: "currency"
        case .decimal: "decimal"
        case .identifier(let prefix): "\(prefix)…"
        }
    }

    /// The value normalised (currencies upper-cased), or why it does not fit.
    func check(_ value: String) -> ParameterCheck {
        switch self {
        case .currency:
            let upper = value.uppercased()
            guard upper.count == 3, upper.allSatisfy({ $0 >= "A" && $0 <= "Z" }) else {
                return .invalid("expected a three-letter currency code such as EUR")
            }
            return .valid(upper)
        case .decimal:
            var sawDigit = false
            var sawPoint = false
            for (index, character) in value.enumerated() {
                switch character {
                case "0"..."9": sawDigit = true
                case "." where !sawPoint: sawPoint = true
                case "-" where index == 0, "+" where index == 0: continue
                default: return .invalid("expected a decimal number such as 500.00")
                }
            }
            return sawDigit ? .valid(value) : .invalid("expected a decimal number such as 500.00")
        case .identifier(let prefix):
            let upper = value.uppercased()
            guard upper.hasPrefix(prefix), upper.count > prefix.count,
                upper.dropFirst(prefix.count).allSatisfy(\.isNumber)
            else { return .invalid("expected an id such as \(prefix)42") }
            return .valid(upper)
        }
    }
}
