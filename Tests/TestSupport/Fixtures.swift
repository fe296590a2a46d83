import BureauSchemas

/// A `RatesPublished` with the euro as base and these rates (units per euro).
public func rates(_ values: [String: String], asOf: String = "2026-10-30") -> Bureau_Rates_RatesPublished {
    var event = Bureau_Rates_RatesPublished()
    event.asOf = asOf
    event.base = "EUR"
    event.source = "test"
    event.rates = values.sorted { $0.key < $1.key }.map { currency, rate in
        var item = Bureau_Rates_Rate()
        item.currency = currency
        item.rate = rate
        return item
    }
    return event
}
