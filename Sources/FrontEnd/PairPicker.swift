import Money
import TerminalUI

/// Choosing a currency pair in two steps, base then quote, with type-to-filter.
///
/// Pairs in `watched` are listed with a mark and cannot be picked. The picker knows nothing of
/// who opened it: it reports ``Outcome/picked(_:)`` and the coordinator hands the pair back to
/// the opener.
public struct PairPicker: Sendable, Equatable {
    public enum Step: Sendable, Equatable {
        case base
        case quote(base: Currency)
    }

    public enum Outcome: Sendable, Equatable {
        case open
        case cancelled
        case picked(CurrencyPair)
    }

    /// One currency as the current step lists it.
    public struct Option: Sendable, Equatable {
        public var currency: Currency
        /// The pair it would make is already watched: shown, not pickable.
        public var isWatched: Bool
    }

    public let currencies: [Currency]
    public let watched: Set<CurrencyPair>
    public private(set) var step: Step = .base
    public private(set) var filter = ""
    /// The index into ``options`` of the highlighted one.
    public private(set) var highlighted = 0
    /// Why the last Enter did nothing, shown until the next key.
    public private(set) var notice: String?

    public init(currencies: [Currency], watched: Set<CurrencyPair> = []) {
        self.currencies = currencies.sorted()
        self.watched = watched
    }

    /// The currencies the current step offers, narrowed by the filter (codes starting with it first,
    /// then codes containing it).
    public var options: [Option] {
        let query = filter.uppercased()
        let candidates: [Currency]
        switch step {
        case .base: candidates = currencies
        case .quote(let base): candidates = currencies.filter { $0 != base }
        }
        let starting = candidates.filter { query.isEmpty || $0.code.hasPrefix(query) }
        let containing = candidates.filter { !query.isEmpty && !$0.code.hasPrefix(query) && $0.code.contains(query) }
        return (starting + containing).map { currency in
            switch step {
            case .base: Option(currency: currency, isWatched: false)
            case .quote(let base):
                Option(currency: currency, isWatched: watched.contains(CurrencyPair(base: base, quote: currency)))
            }
        }
    }

    public mutating func handle(_ key: Key) -> Outcome {
        notice = nil
        switch key {
        case .escape, .control("c"), .control("g"):
            return .cancelled
        case .up:
            highlighted = max(0, highlighted - 1)
        case .down:
            highlighted = min(max(0, options.count - 1), highlighted + 1)
        case .backspace:
            if filter.isEmpty, case .quote = step {
                step = .base
            } else if !filter.isEmpty {
                filter.removeLast()
            }
            highlightFirstPickable()
        case .character(let character) where character.isLetter:
            filter.append(Character(character.uppercased()))
            highlightFirstPickable()
        case .enter:
            return choose()
        default:
            break
        }
        return .open
    }

    private mutating func choose() -> Outcome {
        let options = options
        guard options.indices.contains(highlighted) else {
            notice = "no currency matches \(filter)"
            return .open
        }
        let option = options[highlighted]
        switch step {
        case .base:
            step = .quote(base: option.currency)
            filter = ""
            highlightFirstPickable()
            return .open
        case .quote(let base):
            let pair = CurrencyPair(base: base, quote: option.currency)
            guard !option.isWatched else {
                notice = "\(pair) is already watched"
                return .open
            }
            return .picked(pair)
        }
    }

    private mutating func highlightFirstPickable() {
        highlighted = options.firstIndex { !$0.isWatched } ?? 0
    }
}
