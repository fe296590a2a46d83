import Foundation

/// A fixing of reference rates: units of each currency per one unit of the base (the euro).
public struct ReferenceRates: Hashable, Sendable, Codable {
    /// The fixing's date, "YYYY-MM-DD".
    public var asOf: String
    public var base: Currency
    /// Units of each currency per one unit of ``base``; the base itself is not listed.
    public var rates: [Currency: Decimal]

    public init(asOf: String, base: Currency = .euro, rates: [Currency: Decimal]) {
        self.asOf = asOf
        self.base = base
        self.rates = rates
    }

    /// Every currency these rates can convert: the base and each listed one.
    public var currencies: Set<Currency> { Set(rates.keys).union([base]) }

    /// Units of `quote` per one unit of `base`: rate(EUR→quote) / rate(EUR→base), exact to
    /// Decimal's 38 digits; nil if either is missing or a rate is not positive.
    public func crossRate(from source: Currency, to target: Currency) -> Decimal? {
        guard let from = rate(of: source), let to = rate(of: target), from > 0, to > 0 else { return nil }
        return to / from
    }

    /// The rate people are shown and quote back: the cross rate to six significant digits
    /// ("1.08320", "157.250"). A reservation's quoted rate must equal it.
    public func quote(from source: Currency, to target: Currency) -> Decimal? {
        crossRate(from: source, to: target).map { DecimalText.round($0, significantDigits: ReferenceRates.quoteDigits) }
    }

    /// Significant digits of a quote.
    public static let quoteDigits = 6

    private func rate(of currency: Currency) -> Decimal? {
        currency == base ? 1 : rates[currency]
    }

    enum CodingKeys: String, CodingKey { case asOf, base, rates }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        asOf = try container.decode(String.self, forKey: .asOf)
        base = try container.decode(Currency.self, forKey: .base)
        let texts = try container.decode([String: String].self, forKey: .rates)
        var rates: [Currency: Decimal] = [:]
        for (code, text) in texts {
            guard let currency = Currency(code), let value = try? DecimalText.parse(text).value else {
                throw DecodingError.dataCorruptedError(
                    forKey: .rates, in: container, debugDescription: "bad rate \(code)=\(text)")
            }
            rates[currency] = value
        }
        self.rates = rates
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(asOf, forKey: .asOf)
        try container.encode(base, forKey: .base)
        try container.encode(
            Dictionary(uniqueKeysWithValues: rates.map { ($0.key.code, DecimalText.plain($0.value)) }), forKey: .rates)
    }
}
