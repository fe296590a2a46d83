import BureauSchemas
import Foundation

extension ReferenceRates {
    /// The rates a `RatesPublished` event carries. Rates of currencies Bureau does not know, or
    /// that are not positive decimals, are left out (and named in `skipped`).
    public init(_ event: Bureau_Rates_RatesPublished, skipped: inout [String]) {
        var rates: [Currency: Decimal] = [:]
        for rate in event.rates {
            guard let currency = Currency(rate.currency), let value = try? DecimalText.parse(rate.rate).value, value > 0
            else {
                skipped.append("\(rate.currency)=\(rate.rate)")
                continue
            }
            rates[currency] = value
        }
        self.init(asOf: event.asOf, base: Currency(event.base) ?? .euro, rates: rates)
    }

    public init(_ event: Bureau_Rates_RatesPublished) {
        var skipped: [String] = []
        self.init(event, skipped: &skipped)
    }
}
