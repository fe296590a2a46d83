import BureauSchemas
import FeatureTestSupport
import Runtime
import Testing
import WatchlistFeature

struct WatchlistReducerTests {
    static let fixing = rates(["USD": "1.1172", "JPY": "175.68", "GBP": "0.8338"])

    @Test func aPairOfTwoCurrenciesInTheLatestRatesIsAdded() {
        var spec = ReducerSpec(WatchlistReducer())
        spec.given(Self.fixing)
        #expect(
            spec.when(PairAddRequested(base: "EUR", quote: "USD")) == [Emitted(PairAdded(base: "EUR", quote: "USD"))])
        #expect(
            spec.when(PairAddRequested(base: "usd", quote: "jpy")) == [Emitted(PairAdded(base: "USD", quote: "JPY"))])
        #expect(spec.state.pairs.map(\.quote) == ["USD", "JPY"])
    }

    @Test func aPairAlreadyWatchedIsRejectedAsADuplicate() {
        var spec = ReducerSpec(WatchlistReducer())
        spec.given(Self.fixing, PairAddRequested(base: "EUR", quote: "USD"))
        #expect(
            spec.when(PairAddRequested(base: "EUR", quote: "USD")) == [
                Emitted(
                    PairRejected(
                        base: "EUR", quote: "USD", reason: .duplicate, message: "EUR/USD is already on the watchlist"))
            ])
        #expect(spec.state.pairs.count == 1)
    }

    @Test func aPairOfOneCurrencyTwiceIsRejected() {
        var spec = ReducerSpec(WatchlistReducer())
        spec.given(Self.fixing)
        let output = spec.when(PairAddRequested(base: "USD", quote: "USD"))
        #expect(output.count == 1)
        #expect((output.first?.message as? PairRejected)?.reason == .sameCurrency)
    }

    @Test func aCurrencyMissingFromTheLatestRatesIsRejectedAsUnknown() {
        var spec = ReducerSpec(WatchlistReducer())
        spec.given(Self.fixing)
        let output = spec.when(PairAddRequested(base: "EUR", quote: "XYZ"))
        #expect(
            output == [
                Emitted(
                    PairRejected(
                        base: "EUR", quote: "XYZ", reason: .unknownCurrency,
                        message: "XYZ is not in the rates of 2026-10-30"))
            ])
    }

    @Test func beforeAnyRatesEveryCurrencyIsUnknown() {
        var spec = ReducerSpec(WatchlistReducer())
        let output = spec.when(PairAddRequested(base: "EUR", quote: "USD"))
        #expect((output.first?.message as? PairRejected)?.reason == .unknownCurrency)
        #expect((output.first?.message as? PairRejected)?.message.contains("no rates have been published yet") == true)
    }

    @Test func theLatestRatesDecideWhichCurrenciesAreKnown() {
        var spec = ReducerSpec(WatchlistReducer())
        spec.given(Self.fixing, rates(["USD": "1.12"], asOf: "2026-10-31"))
        #expect(
            (spec.when(PairAddRequested(base: "EUR", quote: "JPY")).first?.message as? PairRejected)?.reason
                == .unknownCurrency)
        #expect(
            spec.when(PairAddRequested(base: "EUR", quote: "USD")) == [Emitted(PairAdded(base: "EUR", quote: "USD"))])
    }

    @Test func aWatchedPairIsRemovedAndAnUnwatchedOneIsNotFound() {
        var spec = ReducerSpec(WatchlistReducer())
        spec.given(Self.fixing, PairAddRequested(base: "EUR", quote: "USD"))
        #expect(
            spec.when(PairRemoveRequested(base: "EUR", quote: "USD")) == [
                Emitted(PairRemoved(base: "EUR", quote: "USD"))
            ])
        #expect(
            spec.when(PairRemoveRequested(base: "EUR", quote: "USD")) == [
                Emitted(
                    PairRejected(
                        base: "EUR", quote: "USD", reason: .notFound, message: "EUR/USD is not on the watchlist"))
            ])
        #expect(spec.state.pairs.isEmpty)
    }

    @Test func newRatesEmitNothing() {
        var spec = ReducerSpec(WatchlistReducer())
        #expect(spec.when(Self.fixing).isEmpty)
    }
}
