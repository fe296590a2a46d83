extension Bureau_Rates_RatesPublished {
    /// A fixing: `rates` are units of each currency per unit of `base`, listed by currency
    /// code so that the same rates always encode to the same bytes.
    public init(asOf: String, base: String = "EUR", rates: [String: String], source: String = "") {
        self.init()
        self.asOf = asOf
        self.base = base
        self.source = source
        self.rates = rates.sorted { $0.key < $1.key }.map { currency, rate in
            var item = Bureau_Rates_Rate()
            item.currency = currency
            item.rate = rate
            return item
        }
    }
}
