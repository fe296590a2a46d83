import Foundation
import Guards
import Money

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// One fixing read from an ECB document.
public struct ECBFixing: Sendable, Equatable {
    /// "YYYY-MM-DD".
    public var asOf: String
    /// Currency and rate text as published, sorted by currency.
    public var rates: [(currency: String, rate: String)]

    public static func == (lhs: ECBFixing, rhs: ECBFixing) -> Bool {
        lhs.asOf == rhs.asOf && lhs.rates.map(\.currency) == rhs.rates.map(\.currency)
            && lhs.rates.map(\.rate) == rhs.rates.map(\.rate)
    }
}
