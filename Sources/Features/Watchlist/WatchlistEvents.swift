import BureauSchemas

public typealias PairAddRequested = Bureau_Watchlist_PairAddRequested
public typealias PairRemoveRequested = Bureau_Watchlist_PairRemoveRequested
public typealias PairAdded = Bureau_Watchlist_PairAdded
public typealias PairRemoved = Bureau_Watchlist_PairRemoved
public typealias PairRejected = Bureau_Watchlist_PairRejected
public typealias RatesPublished = Bureau_Rates_RatesPublished

extension PairAddRequested {
    public init(base: String, quote: String) {
        self.init()
        self.base = base
        self.quote = quote
    }
}

extension PairRemoveRequested {
    public init(base: String, quote: String) {
        self.init()
        self.base = base
        self.quote = quote
    }
}

extension PairAdded {
    public init(base: String, quote: String) {
        self.init()
        self.base = base
        self.quote = quote
    }
}

extension PairRemoved {
    public init(base: String, quote: String) {
        self.init()
        self.base = base
        self.quote = quote
    }
}

extension PairRejected {
    public init(base: String, quote: String, reason: Reason, message: String) {
        self.init()
        self.base = base
        self.quote = quote
        self.reason = reason
        self.message = message
    }
}
