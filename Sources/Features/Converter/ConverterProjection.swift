import BureauSchemas
import Bus
import Foundation
import Money
import Runtime

/// The amount converted for every watched pair at the latest cross rate, rounded half to even
/// to the target currency's minor units.
///
/// The amount (100 EUR until a person sets one) is converted into each pair's quote currency:
/// amount × rate(amount's currency → quote), with rate(A→B) = rate(EUR→B) / rate(EUR→A).
public struct ConverterProjection: Projection {
    public static let defaultAmount = Money(rounding: 100, currency: .euro)

    public struct Value: Sendable, Encodable, Equatable {
        public var amount = ConverterProjection.defaultAmount
        public var pairs: [CurrencyPair] = []
        public var rates: ReferenceRates?

        public init() {}

        public struct Conversion: Sendable, Encodable, Equatable {
            public var pair: String
            /// The amount in the pair's quote currency, e.g. "111.72"; nil without rates for it.
            public var converted: String?
            public var currency: String
        }

        public var conversions: [Conversion] {
            pairs.map { pair in
                Conversion(
                    pair: pair.description, converted: convert(to: pair.quote)?.text, currency: pair.quote.code)
            }
        }

        /// The amount in `currency` at the latest rates.
        public func convert(to currency: Currency) -> Money? {
            guard let rate = rates?.crossRate(from: amount.currency, to: currency) else { return nil }
            return Money(rounding: amount.amount * rate, currency: currency)
        }

        enum CodingKeys: String, CodingKey { case amount, currency, asOf, conversions }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(amount.text, forKey: .amount)
            try container.encode(amount.currency.code, forKey: .currency)
            try container.encodeIfPresent(rates?.asOf, forKey: .asOf)
            try container.encode(conversions, forKey: .conversions)
        }
    }

    public init() {}

    public var name: String { "converter" }
    public var inputTypes: [String] {
        [
            AmountChanged.protoMessageName, Bureau_Watchlist_PairAdded.protoMessageName,
            Bureau_Watchlist_PairRemoved.protoMessageName, Bureau_Rates_RatesPublished.protoMessageName,
        ]
    }
    public var initialValue: Value { Value() }

    /// An `AmountChanged` whose amount or currency cannot be read: the fold passes over it and
    /// says so, and the amount before it stays.
    public struct UnreadableAmount: Error, CustomStringConvertible {
        public let description: String
    }

    public func apply(_ event: StoredEvent, to value: inout Value) throws {
        if let changed = try event.payload(as: AmountChanged.self) {
            guard let currency = Currency(changed.currency) else {
                throw UnreadableAmount(description: "'\(changed.currency)' is not a currency")
            }
            let amount: Decimal
            do {
                amount = try DecimalText.parse(changed.value).value
            } catch {
                throw UnreadableAmount(description: "the amount cannot be read: \(error)")
            }
            value.amount = Money(rounding: amount, currency: currency)
        } else if let added = try event.payload(as: Bureau_Watchlist_PairAdded.self),
            let base = Currency(added.base), let quote = Currency(added.quote)
        {
            let pair = CurrencyPair(base: base, quote: quote)
            if !value.pairs.contains(pair) { value.pairs.append(pair) }
        } else if let removed = try event.payload(as: Bureau_Watchlist_PairRemoved.self),
            let base = Currency(removed.base), let quote = Currency(removed.quote)
        {
            value.pairs.removeAll { $0 == CurrencyPair(base: base, quote: quote) }
        } else if let rates = try event.payload(as: Bureau_Rates_RatesPublished.self) {
            value.rates = ReferenceRates(rates)
        }
    }

    public func render(_ value: Value) -> String {
        var lines = [
            "\(Self.shown("\(value.amount)")) converted at the rates of \(Self.shown(value.rates?.asOf ?? "—"))"
        ]
        for conversion in value.conversions {
            lines.append(
                "  " + Self.shown(conversion.pair).padding(toLength: 10, withPad: " ", startingAt: 0)
                    + Self.shown(conversion.converted.map { "\($0) \(conversion.currency)" } ?? "—"))
        }
        if value.pairs.isEmpty { lines.append("  (no pairs on the watchlist)") }
        return lines.joined(separator: "\n")
    }
}
