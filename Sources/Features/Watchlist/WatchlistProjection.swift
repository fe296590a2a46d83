import Bus
import Foundation
import Money
import Runtime

/// What the watchlist screen and `bureau show watchlist` display: each pair with its rate and
/// its change since the previous fixing.
public struct WatchlistProjection: Projection {
    public struct Value: Sendable, Encodable, Equatable {
        public var pairs: [CurrencyPair] = []
        public var latest: ReferenceRates?
        public var previous: ReferenceRates?

        public init() {}

        /// One line of the watchlist.
        public struct Row: Sendable, Encodable, Equatable {
            public var pair: String
            /// The quote, six significant digits; nil if the rates lack a currency.
            public var rate: String?
            public var previousRate: String?
            public var change: Change
            public var asOf: String?
        }

        public enum Change: String, Sendable, Encodable {
            case up, down, same, new
        }

        public var rows: [Row] {
            pairs.map { pair in
                let rate = latest?.quote(from: pair.base, to: pair.quote)
                let before = previous?.quote(from: pair.base, to: pair.quote)
                let change: Change =
                    switch (rate, before) {
                    case (let now?, let then?): now > then ? .up : now < then ? .down : .same
                    default: .new
                    }
                return Row(
                    pair: pair.description, rate: rate.map(DecimalText.plain),
                    previousRate: before.map(DecimalText.plain),
                    change: change, asOf: latest?.asOf)
            }
        }

        enum CodingKeys: String, CodingKey { case rows, asOf, previousAsOf }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(rows, forKey: .rows)
            try container.encodeIfPresent(latest?.asOf, forKey: .asOf)
            try container.encodeIfPresent(previous?.asOf, forKey: .previousAsOf)
        }
    }

    public init() {}

    public var name: String { "watchlist" }
    public var inputTypes: [String] {
        [PairAdded.protoMessageName, PairRemoved.protoMessageName, RatesPublished.protoMessageName]
    }
    public var initialValue: Value { Value() }

    public func apply(_ event: StoredEvent, to value: inout Value) throws {
        if let added = try event.payload(as: PairAdded.self), let pair = CurrencyPair(added.base, added.quote) {
            if !value.pairs.contains(pair) { value.pairs.append(pair) }
        } else if let removed = try event.payload(as: PairRemoved.self),
            let pair = CurrencyPair(removed.base, removed.quote)
        {
            value.pairs.removeAll { $0 == pair }
        } else if let rates = try event.payload(as: RatesPublished.self) {
            let fixing = ReferenceRates(rates)
            if fixing.asOf != value.latest?.asOf { value.previous = value.latest }
            value.latest = fixing
        }
    }

    public func render(_ value: Value) -> String {
        guard !value.pairs.isEmpty else { return "The watchlist is empty." }
        let arrows: [Value.Change: String] = [.up: "▲", .down: "▼", .same: "=", .new: " "]
        var lines = ["pair      rate          change  as of"]
        for row in value.rows {
            lines.append(
                Self.shown(row.pair).padding(toLength: 10, withPad: " ", startingAt: 0)
                    + Self.shown(row.rate ?? "—").padding(toLength: 14, withPad: " ", startingAt: 0)
                    + (arrows[row.change] ?? " ").padding(toLength: 8, withPad: " ", startingAt: 0)
                    + Self.shown(row.asOf ?? ""))
        }
        return lines.joined(separator: "\n")
    }
}

extension CurrencyPair {
    /// The pair of two known currency codes; nil if Bureau does not know either.
    public init?(_ base: String, _ quote: String) {
        guard let base = Currency(base), let quote = Currency(quote) else { return nil }
        self.init(base: base, quote: quote)
    }
}
