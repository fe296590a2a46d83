import BureauSchemas
import Bus
import FeatureTestSupport
import ReservationsFeature
import Runtime
import Testing

struct ReservationsReducerTests {
    /// EUR/USD 1.1172, EUR/JPY 175.68, so USD/JPY = 175.68 / 1.1172 = 157.250… → quote 157.250.
    static let fixing = rates(["USD": "1.1172", "JPY": "175.68", "GBP": "0.8338"])

    static func spec() -> ReducerSpec<ReservationsReducer> {
        var spec = ReducerSpec(ReservationsReducer())
        spec.given(fixing)
        return spec
    }

    static func reason(_ output: [Emitted]) -> ReservationRejected.Reason? {
        (output.first?.message as? ReservationRejected)?.reason
    }

    /// The accepted reservation of 500.00 EUR in USD at 1.1172, with `commission` at `rate`.
    static func accepted(
        commissionRate: String = "0", commission: String = "0.00", net: String = "558.60",
        basis: ReservationAcceptedV2.CommissionBasis = .beforeCommissions
    )
        -> ReservationAcceptedV2
    {
        var accepted = ReservationAcceptedV2()
        accepted.reservationID = "R2"
        accepted.base = "EUR"
        accepted.quote = "USD"
        accepted.amount = "500.00"
        accepted.rate = "1.1172"
        accepted.grossAmount = "558.60"
        accepted.commissionRate = commissionRate
        accepted.commission = commission
        accepted.netAmount = net
        accepted.asOf = "2026-10-30"
        accepted.commissionBasis = basis
        return accepted
    }

    @Test func aReservationAtTheCurrentRateIsAcceptedWithTheCounterAmount() {
        var spec = Self.spec()
        let output = spec.when(ReservationRequested(base: "EUR", quote: "USD", amount: "500.00", rate: "1.1172"))
        // No commission rate was ever set: none is charged, and the reservation says no rate was set
        // (not that it came before commissions: it did not).
        #expect(output == [Emitted(Self.accepted())])
        #expect((output.first?.message as? ReservationAcceptedV2)?.commissionBasis == .beforeCommissions)
        #expect(spec.state.reservations["R2"]?.status == .pending)
    }

    @Test func aCommissionRateKeptThatIsNotANumberRefusesTheReservationNeverChargesNone() {
        // Given a state (restored from elsewhere) whose commission rate on USD does not parse
        var spec = Self.spec()
        var state = spec.state
        state.commissionRates = ["USD": "half a percent"]
        spec.given(state: state)
        // When a reservation selling USD comes
        let output = spec.when(ReservationRequested(base: "EUR", quote: "USD", amount: "500.00", rate: "1.1172"))
        // Then it is refused, naming the rate kept, and nothing is reserved
        let rejected = output.first?.message as? ReservationRejected
        #expect(rejected?.message == "the commission rate kept for USD, 'half a percent', is not a number")
        #expect(spec.state.reservations.isEmpty)
    }

    @Test func aCrossRateIsQuotedToSixSignificantDigitsAndTheCounterAmountToTheQuotesMinorUnits() {
        var spec = Self.spec()
        let output = spec.when(ReservationRequested(base: "USD", quote: "JPY", amount: "100", rate: "157.250"))
        let accepted = output.first?.message as? ReservationAcceptedV2
        #expect(accepted?.rate == "157.25")
        #expect(accepted?.grossAmount == "15725")
        #expect(accepted?.netAmount == "15725")
    }

    @Test func theCommissionOnTheCurrencySoldIsChargedOnTheGrossAmountAndRoundedToItsMinorUnits() {
        // Given 0.5 % on USD (and 1 % on JPY, which this reservation does not sell)
        var spec = Self.spec()
        spec.given(CommissionRateSetRequested(currency: "usd", rate: "0.005"))
        spec.given(CommissionRateSetRequested(currency: "JPY", rate: "0.01"))
        // When 500.00 EUR are reserved in USD at 1.1172 (558.60 USD gross)
        let output = spec.when(ReservationRequested(base: "EUR", quote: "USD", amount: "500.00", rate: "1.1172"))
        // Then 2.793 USD of commission rounds half-even to 2.79, and 555.81 USD is received
        var expected = Self.accepted(commissionRate: "0.005", commission: "2.79", net: "555.81", basis: .schedule)
        expected.reservationID = "R4"
        #expect(output == [Emitted(expected)])
        #expect(spec.state.reservations["R4"]?.netAmount == "555.81")
    }

    @Test func onceACommissionScheduleExistsACurrencyWithoutARateIsChargedNothingByIt() {
        var spec = Self.spec()
        spec.given(CommissionRateSetRequested(currency: "JPY", rate: "0.01"))
        let output = spec.when(ReservationRequested(base: "EUR", quote: "USD", amount: "500.00", rate: "1.1172"))
        var expected = Self.accepted(basis: .schedule)
        expected.reservationID = "R3"
        #expect(output == [Emitted(expected)])
    }

    @Test func replayingAReservationStoredBeforeCommissionsComputesWhatItsUpcasterReads() throws {
        // The verifier compares what the reducer computes with what the log holds, read through
        // the upcaster: for a log from before commissions the two must be the same.
        var spec = Self.spec()
        let computed = try #require(
            spec.when(ReservationRequested(base: "EUR", quote: "USD", amount: "500.00", rate: "1.1172")).first?
                .message as? ReservationAcceptedV2)
        var old = ReservationAccepted()
        old.reservationID = "R2"
        old.base = "EUR"
        old.quote = "USD"
        old.amount = "500.00"
        old.rate = "1.1172"
        old.quoteAmount = "558.60"
        old.asOf = "2026-10-30"
        let stored = StoredEvent(
            position: 3, id: .random(), type: ReservationAccepted.protoMessageName, commitTime: .zero,
            payload: try old.serializedData())
        #expect(try ReservationAcceptedUpcaster().upcast(old, of: stored) == computed)
    }

    @Test func aCommissionRateIsSetForACurrencyAndAnswered() {
        var spec = Self.spec()
        #expect(
            spec.when(CommissionRateSetRequested(currency: "gbp", rate: "0.0075"))
                == [Emitted(CommissionRateSet(currency: "GBP", rate: "0.0075"))])
        #expect(spec.state.commissionRates == ["GBP": "0.0075"])
        // Set again, to nothing: kept as the latest says.
        #expect(
            spec.when(CommissionRateSetRequested(currency: "GBP", rate: "0"))
                == [Emitted(CommissionRateSet(currency: "GBP", rate: "0"))])
        #expect(spec.state.commissionRates == ["GBP": "0"])
    }

    @Test(arguments: [("XXX", "0.01"), ("USD", "abc"), ("USD", "-0.01"), ("USD", "0.2"), ("USD", "")])
    func aCommissionRateThatCannotBeChargedIsRejectedAndChangesNothing(currency: String, rate: String) {
        var spec = Self.spec()
        let output = spec.when(CommissionRateSetRequested(currency: currency, rate: rate))
        let rejected = output.first?.message as? CommissionRateRejected
        #expect(rejected?.currency == currency)
        #expect(rejected?.message.isEmpty == false)
        #expect(spec.state.commissionRates == nil)
    }

    @Test func aRateThatDiffersFromTheCurrentOneIsStale() {
        var spec = Self.spec()
        let output = spec.when(ReservationRequested(base: "EUR", quote: "USD", amount: "500", rate: "1.1000"))
        #expect(Self.reason(output) == .staleQuote)
        #expect(
            (output.first?.message as? ReservationRejected)?.message
                == "EUR/USD is now 1.1172 (rates of 2026-10-30), not 1.1000")
    }

    @Test func aQuoteFromRatesOlderThanTheMaximumAgeIsStale() {
        var spec = Self.spec()
        spec.advance(by: .seconds(4 * 24 * 3600 + 1))
        #expect(
            Self.reason(spec.when(ReservationRequested(base: "EUR", quote: "USD", amount: "5", rate: "1.1172")))
                == .staleQuote)
        spec.given(rates(["USD": "1.1172"], asOf: "2026-11-03"))
        #expect(
            Self.reason(spec.when(ReservationRequested(base: "EUR", quote: "USD", amount: "5", rate: "1.1172"))) == nil)
    }

    @Test(arguments: [("abc", "'abc' is not a rate"), ("", "'' is not a rate"), ("1,1172", "'1,1172' is not a rate")])
    func aRateThatIsNotANumberIsStaleAndTheRejectionQuotesIt(rate: String, message: String) {
        var spec = Self.spec()
        let output = spec.when(ReservationRequested(base: "EUR", quote: "USD", amount: "5", rate: rate))
        #expect(Self.reason(output) == .staleQuote)
        #expect((output.first?.message as? ReservationRejected)?.message == message)
    }

    @Test(arguments: [("EUR", "XYZ"), ("EUR", "EUR"), ("CHF", "USD"), ("", "USD")])
    func aPairNotInTheRatesIsUnknown(base: String, quote: String) {
        var spec = Self.spec()
        #expect(
            Self.reason(spec.when(ReservationRequested(base: base, quote: quote, amount: "5", rate: "1")))
                == .unknownPair)
    }

    @Test func withoutAnyRatesEveryPairIsUnknown() {
        var spec = ReducerSpec(ReservationsReducer())
        #expect(
            Self.reason(spec.when(ReservationRequested(base: "EUR", quote: "USD", amount: "5", rate: "1.1")))
                == .unknownPair)
    }

    @Test(arguments: ["0", "-1", "abc", "10.001", "1000000001"])
    func aBadAmountIsRejected(amount: String) {
        var spec = Self.spec()
        #expect(
            Self.reason(spec.when(ReservationRequested(base: "EUR", quote: "USD", amount: amount, rate: "1.1172")))
                == .badAmount)
    }

    @Test func anAmountInYenHasNoDecimals() {
        var spec = Self.spec()
        #expect(
            Self.reason(spec.when(ReservationRequested(base: "JPY", quote: "EUR", amount: "100.5", rate: "0.00569217")))
                == .badAmount)
    }

    /// A spec with R2 accepted, and confirmed by the booking service unless told otherwise.
    static func reserved(confirm: Bool = true) -> ReducerSpec<ReservationsReducer> {
        var spec = Self.spec()
        spec.given(ReservationRequested(base: "EUR", quote: "USD", amount: "500.00", rate: "1.1172"))
        if confirm { spec.given(ReservationConfirmed(reservationID: "R2", confirmationCode: "BK-1")) }
        return spec
    }

    @Test func aConfirmedReservationIsCancelledOnce() {
        var spec = Self.reserved()
        #expect(spec.state.reservations["R2"]?.status == .confirmed)
        #expect(
            spec.when(CancellationRequested(reservationID: "r2")) == [
                Emitted(CancellationAccepted(reservationID: "R2"))
            ])
        let again = spec.when(CancellationRequested(reservationID: "R2"))
        #expect((again.first?.message as? CancellationRejected)?.reason == .alreadyCancelled)
        spec.given(ReservationCancelled(reservationID: "R2"))
        #expect(spec.state.reservations["R2"]?.status == .cancelled)
        #expect(
            (spec.when(CancellationRequested(reservationID: "R2")).first?.message as? CancellationRejected)?.reason
                == .alreadyCancelled)
    }

    @Test func aPendingOrFailedReservationCannotBeCancelled() {
        var pending = Self.reserved(confirm: false)
        #expect(
            (pending.when(CancellationRequested(reservationID: "R2")).first?.message as? CancellationRejected)?.reason
                == .notConfirmed)
        pending.given(ReservationFailed(reservationID: "R2", reason: "no stock"))
        #expect(pending.state.reservations["R2"]?.status == .failed)
        #expect(
            (pending.when(CancellationRequested(reservationID: "R2")).first?.message as? CancellationRejected)?.reason
                == .notConfirmed)
    }

    @Test func anUnknownReservationIsNotFound() {
        var spec = Self.spec()
        #expect(
            (spec.when(CancellationRequested(reservationID: "R99")).first?.message as? CancellationRejected)?.reason
                == .notFound)
    }

    @Test func aFailedCancellationLeavesTheReservationConfirmedAndCancellableAgain() {
        var spec = Self.reserved()
        spec.given(
            CancellationRequested(reservationID: "R2"), CancellationFailed(reservationID: "R2", reason: "closed"))
        #expect(spec.state.reservations["R2"]?.status == .confirmed)
        #expect(
            spec.when(CancellationRequested(reservationID: "R2")) == [
                Emitted(CancellationAccepted(reservationID: "R2"))
            ])
    }

    @Test func bookingOutcomesEmitNothingAndOutcomesForOtherStatesAreIgnored() {
        var spec = Self.reserved(confirm: false)
        #expect(spec.when(ReservationConfirmed(reservationID: "R2", confirmationCode: "X")).isEmpty)
        #expect(spec.when(ReservationFailed(reservationID: "R2", reason: "late")).isEmpty)
        #expect(spec.state.reservations["R2"]?.status == .confirmed)
        #expect(spec.when(ReservationCancelled(reservationID: "R404")).isEmpty)
    }

    @Test func aBookingWhoseOutcomeIsUnknownIsUnknownUntilTheServiceSaysAndCannotBeCancelledMeanwhile() {
        // Given R2 accepted and its booking call's outcome unknown
        var spec = Self.reserved(confirm: false)
        #expect(spec.when(BookingOutcomeUnknown(reservationID: "R2", call: .booking, reason: "timed out")).isEmpty)
        #expect(spec.state.reservations["R2"]?.status == .unknown)
        // When a cancellation is asked for, then it is refused: nothing is confirmed yet
        let refused = spec.when(CancellationRequested(reservationID: "R2")).first?.message as? CancellationRejected
        #expect(refused?.reason == .notConfirmed)
        #expect(
            refused?.message
                == "R2 is not confirmed yet: the booking service is being asked whether it booked it; "
                + "only a confirmed reservation can be cancelled")
        // When the service's answer comes, then it ends the reservation
        spec.given(ReservationConfirmed(reservationID: "R2", confirmationCode: "BK-1"))
        #expect(spec.state.reservations["R2"]?.status == .confirmed)
        #expect(spec.state.reservations["R2"]?.confirmationCode == "BK-1")
    }

    @Test func anUnknownBookingThatTheServiceDidNotMakeEndsFailed() {
        var spec = Self.reserved(confirm: false)
        spec.given(
            BookingOutcomeUnknown(reservationID: "R2", call: .booking, reason: "timed out"),
            ReservationFailed(reservationID: "R2", reason: "the booking service did not book it"))
        #expect(spec.state.reservations["R2"]?.status == .failed)
        #expect(spec.state.reservations["R2"]?.failure == "the booking service did not book it")
    }

    @Test func aCancellationWhoseOutcomeIsUnknownStaysCancellingAndAMarkerOutOfTurnChangesNothing() {
        var spec = Self.reserved()
        spec.given(CancellationRequested(reservationID: "R2"))
        spec.given(BookingOutcomeUnknown(reservationID: "R2", call: .cancellation, reason: "connection cut"))
        #expect(spec.state.reservations["R2"]?.status == .cancelling)
        spec.given(ReservationCancelled(reservationID: "R2"))
        #expect(spec.state.reservations["R2"]?.status == .cancelled)
        // A booking marker for a reservation that is not pending is not taken.
        spec.given(BookingOutcomeUnknown(reservationID: "R2", call: .booking, reason: "late"))
        #expect(spec.state.reservations["R2"]?.status == .cancelled)
    }
}
