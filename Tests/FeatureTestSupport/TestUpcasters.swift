import BureauSchemas
import Bus

/// A chain of upcasters over three shapes of one pair event, played by three schema messages
/// with the same fields: what the upcasting tests and the bus contract read old events through.
public enum TestUpcasters {
    public typealias V1 = Bureau_Watchlist_PairAddRequested
    public typealias V2 = Bureau_Watchlist_PairAdded
    public typealias V3 = Bureau_Watchlist_PairRemoveRequested

    public struct OneToTwo: Upcaster {
        public init() {}
        public var change: String { "v2 spells currencies in capitals" }
        public func upcast(_ old: V1, of event: StoredEvent) throws -> V2 {
            var new = V2()
            new.base = old.base.uppercased()
            new.quote = old.quote.uppercased()
            return new
        }
    }

    public struct TwoToThree: Upcaster {
        public init() {}
        public var change: String { "v3 takes the quote from the position when it is missing" }
        public func upcast(_ old: V2, of event: StoredEvent) throws -> V3 {
            var new = V3()
            new.base = old.base
            new.quote = old.quote.isEmpty ? "P\(event.position)" : old.quote
            return new
        }
    }
}
