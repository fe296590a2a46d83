import ConverterFeature
import FeatureTestSupport
import Runtime
import Testing

struct ConverterReducerTests {
    static func rejection(_ value: String, _ currency: String) -> AmountRejected.Reason? {
        var spec = ReducerSpec(ConverterReducer())
        return (spec.when(AmountSetRequested(value: value, currency: currency)).first?.message as? AmountRejected)?
            .reason
    }

    @Test func aValidAmountIsNormalisedToTheCurrencysMinorUnits() {
        var spec = ReducerSpec(ConverterReducer())
        #expect(
            spec.when(AmountSetRequested(value: "100", currency: "eur")) == [
                Emitted(AmountChanged(value: "100.00", currency: "EUR"))
            ])
        #expect(
            spec.when(AmountSetRequested(value: "15000", currency: "JPY")) == [
                Emitted(AmountChanged(value: "15000", currency: "JPY"))
            ])
        #expect(
            spec.when(AmountSetRequested(value: "1.234", currency: "KWD")) == [
                Emitted(AmountChanged(value: "1.234", currency: "KWD"))
            ])
        #expect(spec.state.amount?.description == "1.234 KWD")
    }

    @Test(arguments: [
        ("12,5", "EUR", AmountRejected.Reason.malformed), ("1e3", "EUR", .malformed), ("", "EUR", .malformed),
        ("0", "EUR", .notPositive), ("-5", "EUR", .notPositive), ("1000000000.01", "EUR", .tooLarge),
        ("10.005", "EUR", .tooManyDecimals), ("100.5", "JPY", .tooManyDecimals), ("100", "XYZ", .unknownCurrency),
    ])
    func anInvalidAmountIsRejectedWithItsReason(value: String, currency: String, reason: AmountRejected.Reason) {
        #expect(Self.rejection(value, currency) == reason)
    }

    @Test func theLimitItselfIsAccepted() {
        #expect(Self.rejection("1000000000", "EUR") == nil)
    }

    @Test func aRejectionSaysWhatWasWrong() {
        var spec = ReducerSpec(ConverterReducer())
        let output = spec.when(AmountSetRequested(value: "10.005", currency: "EUR"))
        #expect(
            output == [
                Emitted(
                    AmountRejected(
                        value: "10.005", currency: "EUR", reason: .tooManyDecimals,
                        message: "10.005 has more decimals than EUR allows (2)"))
            ])
        #expect(spec.state.amount == nil)
    }
}
