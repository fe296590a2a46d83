import Foundation

/// A currency pair as people read it: "EUR/USD" is units of USD per EUR.
public struct CurrencyPair: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    public let base: Currency
    public let quote: Currency

    public init(base: Currency, quote: Currency) {
        self.base = base
        self.quote = quote
    }

    public var description: String { "\(base.code)/\(quote.code)" }

    public static func < (lhs: CurrencyPair, rhs: CurrencyPair) -> Bool {
        (lhs.base.code, lhs.quote.code) < (rhs.base.code, rhs.quote.code)
    }
}
