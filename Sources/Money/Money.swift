import Foundation

/// An amount of a currency, with no more decimals than the currency's minor units.
public struct Money: Hashable, Sendable, Codable, CustomStringConvertible {
    public let amount: Decimal
    public let currency: Currency

    /// The largest amount Bureau accepts, in units of any currency: 1,000,000,000.
    public static let limit = Decimal(1_000_000_000)

    public enum Problem: Error, Equatable, CustomStringConvertible {
        case malformed(DecimalText.Problem)
        case notPositive(String)
        case tooLarge(String)
        case tooManyDecimals(String, Currency)

        public var description: String {
            switch self {
            case .malformed(let problem): problem.description
            case .notPositive(let text): "the amount \(text) is not greater than zero"
            case .tooLarge(let text): "the amount \(text) is over the limit of 1000000000"
            case .tooManyDecimals(let text, let currency):
                "\(text) has more decimals than \(currency.code) allows (\(currency.minorUnits))"
            }
        }
    }

    /// Parses an amount of `currency` and checks Bureau's rules: a decimal, greater than zero,
    /// at most ``limit``, with no more decimals than the currency's minor units.
    public init(parsing text: String, currency: Currency) throws(Problem) {
        let parsed: (value: Decimal, fractionDigits: Int)
        do {
            parsed = try DecimalText.parse(text)
        } catch {
            throw .malformed(error)
        }
        guard parsed.value > 0 else { throw .notPositive(text) }
        guard parsed.value <= Money.limit else { throw .tooLarge(text) }
        guard parsed.fractionDigits <= currency.minorUnits else { throw .tooManyDecimals(text, currency) }
        amount = parsed.value
        self.currency = currency
    }

    /// `amount` of `currency`, rounded half to even to its minor units.
    public init(rounding amount: Decimal, currency: Currency) {
        self.amount = DecimalText.round(amount, scale: currency.minorUnits)
        self.currency = currency
    }

    /// The amount with exactly the currency's decimals, e.g. "100.00", "15000".
    public var text: String { DecimalText.format(amount, scale: currency.minorUnits) }

    public var description: String { "\(text) \(currency.code)" }

    enum CodingKeys: String, CodingKey { case amount, currency }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let currency = try container.decode(Currency.self, forKey: .currency)
        let text = try container.decode(String.self, forKey: .amount)
        guard let value = try? DecimalText.parse(text).value else {
            throw DecodingError.dataCorruptedError(
                forKey: .amount, in: container, debugDescription: "not a decimal: \(text)")
        }
        self.init(rounding: value, currency: currency)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(text, forKey: .amount)
        try container.encode(currency, forKey: .currency)
    }
}
