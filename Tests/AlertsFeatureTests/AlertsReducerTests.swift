import AlertsFeature
import BureauSchemas
import FeatureTestSupport
import Runtime
import Testing

struct AlertsReducerTests {
    static func spec(usd: String = "1.10") -> ReducerSpec<AlertsReducer> {
        var spec = ReducerSpec(AlertsReducer())
        spec.given(rates(["USD": usd, "JPY": "170"]))
        return spec
    }

    static func types(_ output: [Emitted]) -> [String] {
        output.map { String($0.type.split(separator: ".").last ?? "") }
    }

    @Test func anAlertIsArmedWithAnIDFromItsRequest() {
        var spec = Self.spec()
        let output = spec.when(AlertSetRequested(base: "EUR", quote: "USD", direction: .above, threshold: "1.20"))
        var armed = AlertArmed()
        armed.alertID = "A2"
        armed.base = "EUR"
        armed.quote = "USD"
        armed.direction = .above
        armed.threshold = "1.2"
        #expect(output == [Emitted(armed)])
    }

    @Test func itTriggersOnceWhenTheRateCrossesAndReArmsWhenItCrossesBack() {
        var spec = Self.spec()
        spec.given(AlertSetRequested(base: "EUR", quote: "USD", direction: .above, threshold: "1.20"))
        #expect(spec.when(rates(["USD": "1.15"])).isEmpty)
        let crossed = spec.when(rates(["USD": "1.21"], asOf: "2026-10-31"))
        #expect(Self.types(crossed) == ["AlertTriggered"])
        #expect((crossed.first?.message as? AlertTriggered)?.rate == "1.21")
        #expect(spec.when(rates(["USD": "1.25"], asOf: "2026-11-01")).isEmpty, "still above: no second trigger")
        #expect(Self.types(spec.when(rates(["USD": "1.19"], asOf: "2026-11-02"))) == ["AlertRearmed"])
        #expect(
            Self.types(spec.when(rates(["USD": "1.20"], asOf: "2026-11-03"))) == ["AlertTriggered"],
            "at the threshold counts")
    }

    @Test func aBelowAlertWatchesTheCrossRateOfAnyPair() {
        var spec = Self.spec()
        // USD/JPY = 170 / 1.10 = 154.545…
        spec.given(AlertSetRequested(base: "USD", quote: "JPY", direction: .below, threshold: "150"))
        #expect(spec.when(rates(["USD": "1.10", "JPY": "168"])).isEmpty)
        let output = spec.when(rates(["USD": "1.20", "JPY": "170"]))
        #expect((output.first?.message as? AlertTriggered)?.rate == "141.667")
    }

    @Test func alertsTriggerInTheOrderTheyWereSet() {
        var spec = Self.spec()
        spec.given(
            AlertSetRequested(base: "EUR", quote: "USD", direction: .above, threshold: "1.2"),
            AlertSetRequested(base: "EUR", quote: "JPY", direction: .above, threshold: "171"))
        let output = spec.when(rates(["USD": "1.3", "JPY": "180"]))
        #expect(output.compactMap { ($0.message as? AlertTriggered)?.alertID } == ["A2", "A3"])
    }

    @Test(arguments: [
        (
            AlertSetRequested(base: "EUR", quote: "XYZ", direction: .above, threshold: "1"),
            AlertRejected.Reason.unknownPair
        ),
        (AlertSetRequested(base: "USD", quote: "USD", direction: .above, threshold: "1"), .unknownPair),
        (AlertSetRequested(base: "EUR", quote: "USD", direction: .unspecified, threshold: "1"), .badThreshold),
        (AlertSetRequested(base: "EUR", quote: "USD", direction: .below, threshold: "0"), .badThreshold),
        (AlertSetRequested(base: "EUR", quote: "USD", direction: .below, threshold: "lots"), .badThreshold),
    ])
    func aBadAlertIsRejectedWithItsReason(request: AlertSetRequested, reason: AlertRejected.Reason) {
        var spec = Self.spec()
        #expect((spec.when(request).first?.message as? AlertRejected)?.reason == reason)
    }

    @Test func withoutRatesNoPairIsKnown() {
        var spec = ReducerSpec(AlertsReducer())
        let output = spec.when(AlertSetRequested(base: "EUR", quote: "USD", direction: .above, threshold: "1"))
        #expect((output.first?.message as? AlertRejected)?.reason == .unknownPair)
    }

    @Test func aClearedAlertNoLongerTriggersAndAnUnknownOneIsNotFound() {
        var spec = Self.spec()
        spec.given(AlertSetRequested(base: "EUR", quote: "USD", direction: .above, threshold: "1.2"))
        #expect(spec.when(AlertClearRequested(alertID: "a2")) == [Emitted(AlertCleared(alertID: "A2"))])
        #expect(spec.when(rates(["USD": "1.5"])).isEmpty)
        #expect((spec.when(AlertClearRequested(alertID: "A2")).first?.message as? AlertRejected)?.reason == .notFound)
    }
}
