import Bus
import EventLog
import FrontEnd
import ReservationsFeature
import Runtime
import Testing
import WatchlistFeature

/// A request shows as pending until the answer correlated with it arrives; a rejection shows its
/// reason. Every step goes through the coordinator, as the live session drives it.
struct RequestTrackerTests {
    let coordinator = Coordinator(router: Fixtures.router)

    /// `url` sent under `id` (the session's dispatch); returns what the coordinator said to publish.
    func send(_ url: CommandURL, id: EventID, in state: inout AppState) -> [Effect] {
        coordinator.handle(.dispatched(url.text, id: id), in: &state)
    }

    func deliver(_ event: StoredEvent, in state: inout AppState) {
        #expect(coordinator.handle(.delivered(.event(event)), in: &state).isEmpty)
    }

    @Test func aRequestIsPendingUntilItsAnswerThenShowsTheRejectionReason() {
        // Given the fixtures' screens and a request sent
        var state = Fixtures.state
        let id = EventID.random()
        let effects = send(CommandURL.Watchlist.add(base: "EUR", quote: "USD"), id: id, in: &state)
        #expect(effects.count == 1)
        if case .publish(let outgoing) = effects.first {
            #expect(outgoing.type == PairAddRequested.protoMessageName)
        } else {
            Issue.record("expected the request to be published, got \(effects)")
        }
        #expect(state.requests.latest?.status == .pending)
        var rejected = PairRejected()
        rejected.base = "EUR"
        rejected.quote = "USD"
        rejected.reason = .duplicate
        rejected.message = "EUR/USD is already on the watchlist"
        // When an answer to someone else's request arrives, then nothing changes
        deliver(Fixtures.event(17, rejected, correlation: .random()), in: &state)
        #expect(state.requests.latest?.status == .pending)
        // When its own answer arrives, then the rejection and its reason are shown
        deliver(Fixtures.event(18, rejected, correlation: id), in: &state)
        #expect(state.requests.latest?.status == .rejected("EUR/USD is already on the watchlist"))
        let line = ScreenSnapshotTests.screen(state).split(separator: "\n", omittingEmptySubsequences: false)[28]
        #expect(line.contains("✗ watchlist/add?base=EUR&quote=USD: rejected: EUR/USD is already on the watchlist"))
    }

    @Test func anAcceptedAnswerReplacesPending() {
        // Given a request sent
        var state = AppState()
        let id = EventID.random()
        _ = send(CommandURL.Watchlist.add(base: "GBP", quote: "CHF"), id: id, in: &state)
        // When its answer arrives
        deliver(Fixtures.event(1, Fixtures.pairAdded("GBP", "CHF"), correlation: id), in: &state)
        // Then it shows as accepted
        #expect(state.requests.latest?.status == .accepted("PairAdded"))
    }

    @Test func anOutcomeFollowsTheAnswerAndALateAnswerDoesNotHideIt() {
        // Given a reservation sent
        var state = AppState()
        let confirmed = EventID.random()
        _ = send(
            CommandURL.Reservations.reserve(base: "EUR", quote: "USD", amount: "500", rate: "1.1"), id: confirmed,
            in: &state)
        // When its outcome comes before its answer, then the late answer does not hide the outcome
        deliver(
            Fixtures.event(
                1, ReservationConfirmed(reservationID: "R1", confirmationCode: "C1"), correlation: confirmed),
            in: &state)
        #expect(state.requests.latest?.status == .outcome(succeeded: true, "ReservationConfirmed"))
        deliver(Fixtures.event(2, ReservationAcceptedV2(), correlation: confirmed), in: &state)
        #expect(state.requests.latest?.status == .outcome(succeeded: true, "ReservationConfirmed"))
        // Given another sent, when it is accepted and then fails, then the failure is shown
        let failed = EventID.random()
        _ = send(
            CommandURL.Reservations.reserve(base: "EUR", quote: "USD", amount: "5", rate: "1.1"), id: failed,
            in: &state)
        deliver(Fixtures.event(3, ReservationAcceptedV2(), correlation: failed), in: &state)
        #expect(state.requests.latest?.status == .accepted("ReservationAcceptedV2"))
        deliver(
            Fixtures.event(4, ReservationFailed(reservationID: "R2", reason: "no funds"), correlation: failed),
            in: &state)
        #expect(state.requests.latest?.status == .outcome(succeeded: false, "no funds"))
    }

    @Test func aURLThatDoesNotRouteIsNotSentAndSaysWhy() {
        // Given a front-end with no request sent
        var state = AppState()
        // When a URL that does not route is dispatched
        let effects = coordinator.handle(.dispatched("bureau://watchlist/add?base=EUR", id: .random()), in: &state)
        // Then nothing is published and the request says why
        #expect(effects.isEmpty)
        #expect(state.requests.latest?.status == .failed("watchlist/add needs the parameter 'quote'"))
    }
}
