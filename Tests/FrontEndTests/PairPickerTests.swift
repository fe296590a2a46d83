import FrontEnd
import Money
import TerminalUI
import Testing

/// The pair picker on its own: two steps, filtering, watched pairs refused, Esc and Backspace.
struct PairPickerTests {
    static let currencies = ["EUR", "USD", "GBP", "JPY", "CHF"].compactMap(Currency.init)
    static let euroDollar = CurrencyPair(base: .euro, quote: Currency("USD") ?? .euro)

    @Test func typingFiltersAndEnterWalksBaseThenQuote() {
        var picker = PairPicker(currencies: Self.currencies)
        #expect(picker.options.map(\.currency.code) == ["CHF", "EUR", "GBP", "JPY", "USD"])
        #expect(picker.handle(.character("u")) == .open)
        #expect(picker.options.map(\.currency.code) == ["USD", "EUR"])
        #expect(picker.handle(.enter) == .open)
        #expect(picker.step == .quote(base: Currency("USD") ?? .euro))
        #expect(!picker.options.map(\.currency.code).contains("USD"))
        _ = picker.handle(.character("J"))
        #expect(
            picker.handle(.enter)
                == .picked(CurrencyPair(base: Currency("USD") ?? .euro, quote: Currency("JPY") ?? .euro)))
    }

    @Test func aWatchedPairIsMarkedAndCannotBePicked() {
        var picker = PairPicker(currencies: Self.currencies, watched: [Self.euroDollar])
        for key: Key in [.character("E"), .enter] { _ = picker.handle(key) }
        let usd = picker.options.first { $0.currency.code == "USD" }
        #expect(usd?.isWatched == true)
        for key: Key in [.character("U"), .character("S")] { _ = picker.handle(key) }
        #expect(picker.handle(.enter) == .open)
        #expect(picker.notice == "EUR/USD is already watched")
    }

    @Test func backspaceOnAnEmptyFilterGoesBackAndEscapeCancels() {
        var picker = PairPicker(currencies: Self.currencies)
        _ = picker.handle(.enter)
        #expect(picker.step != .base)
        _ = picker.handle(.backspace)
        #expect(picker.step == .base)
        #expect(picker.handle(.escape) == .cancelled)
    }
}
