import BureauSchemas

/// A `RatesPublished` with the euro as base and these rates (units per euro).
public func rates(_ values: [String: String], asOf: String = "2026-10-30") -> Bureau_Rates_RatesPublished {
    Bureau_Rates_RatesPublished(asOf: asOf, rates: values, source: "test")
}
