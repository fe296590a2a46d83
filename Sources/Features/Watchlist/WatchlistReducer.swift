import BureauSchemas
import Money
import Runtime

/// The watchlist: which currency pairs a person watches.
///
/// A pair is two different currencies, both in the latest published rates; a pair already
/// watched is refused as a duplicate, and removing one that is not watched as not found.
public struct WatchlistReducer: Reducer {
    public struct State: Codable, Equatable, Sendable {
        /// In the order they were added.
        public var pairs: [Pair] = []
        /// The currencies of the latest rates, base included.
        public var currencies: Set<String> = []
        public var ratesAsOf = ""

        public init() {}
    }

    public struct Pair: Codable, Hashable, Sendable {
        public var base: String
        public var quote: String

        public init(base: String, quote: String) {
            self.base = base
            self.quote = quote
        }
    }

    public enum Input: Sendable {
        case addRequested(PairAddRequested)
        case removeRequested(PairRemoveRequested)
        case ratesPublished(RatesPublished)
    }

    public init() {}

    public var module: String { "watchlist" }
    public var stateVersion: Int { 1 }
    public var initialState: State { State() }

    public var inputs: InputDecoder<Input> { Self.inputDecoder }

    /// Built once: a host decodes every event with it.
    private static let inputDecoder: InputDecoder<Input> = {
        InputDecoder()
            .on(PairAddRequested.self, Input.addRequested)
            .on(PairRemoveRequested.self, Input.removeRequested)
            .on(RatesPublished.self, Input.ratesPublished)
    }()

    public var outputTypes: [String] { Self.outputs }

    private static let outputs: [String] = {
        [PairAdded.protoMessageName, PairRemoved.protoMessageName, PairRejected.protoMessageName]
    }()

    public func reduce(state: inout State, input: Envelope<Input>) -> [Emitted] {
        switch input.payload {
        case .ratesPublished(let rates):
            state.currencies = Set(rates.rates.map { Currency.upperCased($0.currency) }).union([
                Currency.upperCased(rates.base)
            ])
            state.ratesAsOf = rates.asOf
            return []

        case .addRequested(let request):
            let pair = Pair(base: Currency.upperCased(request.base), quote: Currency.upperCased(request.quote))
            if let rejection = check(pair, in: state) {
                return [Emitted(rejection)]
            }
            guard !state.pairs.contains(pair) else {
                return [
                    Emitted(
                        PairRejected(
                            base: pair.base, quote: pair.quote, reason: .duplicate,
                            message: "\(pair.base)/\(pair.quote) is already on the watchlist"))
                ]
            }
            state.pairs.append(pair)
            return [Emitted(PairAdded(base: pair.base, quote: pair.quote))]

        case .removeRequested(let request):
            let pair = Pair(base: Currency.upperCased(request.base), quote: Currency.upperCased(request.quote))
            guard let index = state.pairs.firstIndex(of: pair) else {
                return [
                    Emitted(
                        PairRejected(
                            base: pair.base, quote: pair.quote, reason: .notFound,
                            message: "\(pair.base)/\(pair.quote) is not on the watchlist"))
                ]
            }
            state.pairs.remove(at: index)
            return [Emitted(PairRemoved(base: pair.base, quote: pair.quote))]
        }
    }

    /// Why `pair` cannot be watched, if it cannot.
    private func check(_ pair: Pair, in state: State) -> PairRejected? {
        if pair.base == pair.quote {
            return PairRejected(
                base: pair.base, quote: pair.quote, reason: .sameCurrency,
                message: "\(pair.base)/\(pair.quote): base and quote are the same currency")
        }
        // Checked before listing which are unknown: nearly every request names known ones, and
        // replay and a catching-up host run this for each.
        if state.currencies.contains(pair.base) && state.currencies.contains(pair.quote) { return nil }
        let unknown = [pair.base, pair.quote].filter { !state.currencies.contains($0) }
        if !unknown.isEmpty {
            let message =
                state.ratesAsOf.isEmpty
                ? "no rates have been published yet"
                : "\(unknown.joined(separator: " and ")) \(unknown.count == 1 ? "is" : "are") not in the rates of \(state.ratesAsOf)"
            return PairRejected(base: pair.base, quote: pair.quote, reason: .unknownCurrency, message: message)
        }
        return nil
    }
}
