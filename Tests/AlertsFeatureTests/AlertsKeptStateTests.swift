import AlertsFeature
import BureauSchemas
import FeatureTestSupport
import Runtime
import Testing

/// Alerts kept in a state restored from elsewhere (a snapshot another build wrote, say) that
/// the reducer cannot read back: said, never left to not fire.
struct AlertsKeptStateTests {
    @Test func anAlertKeptWithAThresholdThatIsNotANumberIsSaidAtEveryFixingNeverLeftSilent() {
        // Given an alert whose threshold, in a state restored from elsewhere, does not parse
        var spec = AlertsReducerTests.spec()
        spec.given(AlertSetRequested(base: "EUR", quote: "USD", direction: .above, threshold: "1.2"))
        var state = spec.state
        state.alerts["A2"]?.threshold = "lots"
        spec.given(state: state)
        // When a fixing that would cross any threshold comes
        let output = spec.when(rates(["USD": "1.5"]))
        // Then the alert says it cannot fire, naming the threshold kept, and triggers nothing
        let rejected = output.first?.message as? AlertRejected
        #expect(AlertsReducerTests.types(output) == ["AlertRejected"])
        #expect(rejected?.alertID == "A2")
        #expect(rejected?.reason == .badThreshold)
        #expect(
            rejected?.message
                == "the threshold kept for A2, 'lots', is not a number: the alert cannot fire; clear it and set it again"
        )
        #expect(spec.state.alerts["A2"]?.triggered == false)
        // And at the next fixing again, while it is kept so
        #expect(AlertsReducerTests.types(spec.when(rates(["USD": "1.6"]))) == ["AlertRejected"])
    }

    @Test func theOtherAlertsStillFireBesideOneThatCannot() {
        // Given two alerts, the first kept with a threshold that does not parse
        var spec = AlertsReducerTests.spec()
        spec.given(
            AlertSetRequested(base: "EUR", quote: "USD", direction: .above, threshold: "1.2"),
            AlertSetRequested(base: "EUR", quote: "USD", direction: .above, threshold: "1.3"))
        var state = spec.state
        state.alerts["A2"]?.threshold = ""
        spec.given(state: state)
        // When a fixing crosses both thresholds
        let output = spec.when(rates(["USD": "1.5"]))
        // Then the first says it cannot fire and the second triggers, in the order they were set
        #expect(AlertsReducerTests.types(output) == ["AlertRejected", "AlertTriggered"])
        #expect((output.last?.message as? AlertTriggered)?.alertID == "A3")
    }
}
