import EventLog
import FrontEnd
import ReservationsFeature
import Runtime
import Testing
import WatchlistFeature

/// A request shows as pending until the answer correlated with it arrives; a rejection shows its reason.
struct RequestTrackerTests {
    @Test func aRequestIsPendingUntilItsAnswerThenShowsTheRejectionReason() {
        var state = Fixtures.state
        let id = EventID.random()
        let outgoing = state.requests.start(
            CommandURL.Watchlist.add(base: "EUR", quote: "USD").text, router: Fixtures.router, id: id)
        #expect(outgoing?.type == PairAddRequested.protoMessageName)
        #expect(state.requests.latest?.status == .pending)
        var rejected = PairRejected()
        rejected.base = "EUR"
        rejected.quote = "USD"
        rejected.reason = .duplicate
        rejected.message = "EUR/USD is already on the watchlist"
        // An answer to someone else's request changes nothing.
        state.receive(Fixtures.event(17, rejected, correlation: .random()))
        #expect(state.requests.latest?.status == .pending)
        state.receive(Fixtures.event(18, rejected, correlation: id))
        #expect(state.requests.latest?.status == .rejected("EUR/USD is already on the watchlist"))
        let line = ScreenSnapshotTests.screen(state).split(separator: "\n", omittingEmptySubsequences: false)[28]
        #expect(line.contains("✗ watchlist/add?base=EUR&quote=USD: rejected: EUR/USD is already on the watchlist"))
    }

    @Test func anAcceptedAnswerReplacesPending() {
        var state = AppState()
        let id = EventID.random()
        _ = state.requests.start(
            CommandURL.Watchlist.add(base: "GBP", quote: "CHF").text, router: Fixtures.router, id: id)
        state.receive(Fixtures.event(1, Fixtures.pairAdded("GBP", "CHF"), correlation: id))
        #expect(state.requests.latest?.status == .accepted("PairAdded"))
    }

    @Test func anOutcomeFollowsTheAnswerAndALateAnswerDoesNotHideIt() {
        var state = AppState()
        let confirmed = EventID.random()
        _ = state.requests.start(
            CommandURL.Reservations.reserve(base: "EUR", quote: "USD", amount: "500", rate: "1.1").text,
            router: Fixtures.router, id: confirmed)
        state.receive(
            Fixtures.event(1, ReservationConfirmed(reservationID: "R1", confirmationCode: "C1"), correlation: confirmed)
        )
        #expect(state.requests.latest?.status == .outcome(succeeded: true, "ReservationConfirmed"))
        state.receive(Fixtures.event(2, ReservationAcceptedV2(), correlation: confirmed))
        #expect(state.requests.latest?.status == .outcome(succeeded: true, "ReservationConfirmed"))
        let failed = EventID.random()
        _ = state.requests.start(
            CommandURL.Reservations.reserve(base: "EUR", quote: "USD", amount: "5", rate: "1.1").text,
            router: Fixtures.router, id: failed)
        state.receive(Fixtures.event(3, ReservationAcceptedV2(), correlation: failed))
        #expect(state.requests.latest?.status == .accepted("ReservationAcceptedV2"))
        state.receive(
            Fixtures.event(4, ReservationFailed(reservationID: "R2", reason: "no funds"), correlation: failed))
        #expect(state.requests.latest?.status == .outcome(succeeded: false, "no funds"))
    }

    @Test func aURLThatDoesNotRouteIsNotSentAndSaysWhy() {
        var tracker = RequestTracker()
        #expect(tracker.start("bureau://watchlist/add?base=EUR", router: Fixtures.router, id: .random()) == nil)
        #expect(tracker.latest?.status == .failed("watchlist/add needs the parameter 'quote'"))
    }
}
