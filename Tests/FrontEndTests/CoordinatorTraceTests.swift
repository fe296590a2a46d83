import Bus
import EventLog
import FrontEnd
import ReservationsFeature
import Runtime
import Testing
import WatchlistFeature

/// The traces of the requests sent, through the coordinator alone: which request is traced, what
/// is recorded as each answer comes back, and when and how its trace ends. The session starts the
/// spans and takes the steps the ``Effect/trace(_:_:)`` effects ask for.
struct CoordinatorTraceTests {
    let coordinator = Coordinator(router: Fixtures.router)
    let reserve = CommandURL.Reservations.reserve(base: "EUR", quote: "USD", amount: "500", rate: "1.1")

    /// A state in which `url` was dispatched under `id`, traced by the span `traceParent`.
    func sent(_ url: CommandURL, id: EventID, traceParent: UInt64 = 42) -> AppState {
        var state = AppState()
        _ = coordinator.handle(.dispatched(url.text, id: id, traceParent: traceParent), in: &state)
        return state
    }

    @Test func aTracedRequestIsPublishedUnderItsTracesIdCarryingItsSpan() {
        // Given a front-end with no request sent
        var state = AppState()
        let id = EventID(high: 3, low: 5)
        // When the session hands back a URL under the id of the trace it started, and its span
        let url = CommandURL.Watchlist.add(base: "EUR", quote: "CHF").text
        let effects = coordinator.handle(.dispatched(url, id: id, traceParent: 42), in: &state)
        // Then the request is pending and traced, and is published as the trace's: its id and
        // correlation are the trace's id, its trace parent the span
        #expect(state.requests.latest?.isTraced == true)
        guard case .publish(let outgoing) = effects.first, effects.count == 1 else {
            Issue.record("expected one publish effect, got \(effects)")
            return
        }
        #expect(outgoing.id == id && outgoing.correlation == id && outgoing.traceParent == 42)
    }

    @Test func anUntracedRequestCarriesNoTraceAndAsksNothingOfOne() {
        // Given a request sent without a trace (tracing is off)
        var state = AppState()
        let id = EventID(high: 1, low: 2)
        let effects = coordinator.handle(
            .dispatched(CommandURL.Watchlist.add(base: "EUR", quote: "CHF").text, id: id), in: &state)
        guard case .publish(let outgoing) = effects.first else {
            Issue.record("expected a publish effect, got \(effects)")
            return
        }
        #expect(outgoing.traceParent == 0)
        #expect(state.requests.latest?.isTraced == false)
        // When its answer arrives, then it is applied, and no trace step is asked for
        let answer = Fixtures.event(1, Fixtures.pairAdded("EUR", "CHF"), correlation: id)
        #expect(coordinator.handle(.delivered(.event(answer)), in: &state).isEmpty)
        #expect(state.requests.latest?.status == .accepted("PairAdded"))
    }

    @Test func aTracedRequestThatIsNotSentEndsItsTraceAtOnce() {
        // Given a front-end with no request sent
        var state = AppState()
        let id = EventID(high: 7, low: 7)
        // When a traced URL that does not route comes back from the session
        let effects = coordinator.handle(.dispatched("bureau://watchlist/fly", id: id, traceParent: 9), in: &state)
        // Then nothing is published, and its trace ends, not failed (no request left the front-end)
        #expect(effects == [.trace(id, .end(failure: nil))])
    }

    @Test func theAnswerToACommandWithoutOutcomesIsReceivedAndEndsTheTrace() {
        // Given a traced watchlist add sent
        let id = EventID(high: 4, low: 4)
        var state = sent(CommandURL.Watchlist.add(base: "GBP", quote: "CHF"), id: id)
        // When someone else's answer arrives, then nothing is asked of the trace
        let other = Fixtures.event(1, Fixtures.pairAdded("GBP", "CHF"), correlation: EventID(high: 8, low: 8))
        #expect(coordinator.handle(.delivered(.event(other)), in: &state).isEmpty)
        // When its own answer arrives
        let answer = Fixtures.event(2, Fixtures.pairAdded("GBP", "CHF"), correlation: id)
        let effects = coordinator.handle(.delivered(.event(answer)), in: &state)
        // Then the answer is a hop back at the sender, and the trace ends: the command has no outcome
        #expect(effects == [.trace(id, .receive(answer)), .trace(id, .end(failure: nil))])
        #expect(state.requests.latest?.isTraced == false)
        // And an event correlated with it afterwards asks nothing more of it
        let again = Fixtures.event(3, Fixtures.pairAdded("GBP", "CHF"), correlation: id)
        #expect(coordinator.handle(.delivered(.event(again)), in: &state).isEmpty)
    }

    @Test func aRejectionEndsTheTraceFailed() {
        // Given a traced watchlist add sent
        let id = EventID(high: 5, low: 5)
        var state = sent(CommandURL.Watchlist.add(base: "EUR", quote: "USD"), id: id)
        // When it is rejected
        var rejected = PairRejected()
        rejected.reason = .duplicate
        rejected.message = "EUR/USD is already on the watchlist"
        let answer = Fixtures.event(1, rejected, correlation: id)
        let effects = coordinator.handle(.delivered(.event(answer)), in: &state)
        // Then the trace ends failed, naming the answer's type (never its payload)
        #expect(
            effects == [.trace(id, .receive(answer)), .trace(id, .end(failure: "answered with \(answer.type)"))])
    }

    @Test func aCommandWithOutcomesIsTracedUntilItsOutcome() {
        // Given a traced reservation sent
        let id = EventID(high: 6, low: 6)
        var state = sent(reserve, id: id)
        // When it is accepted
        let accepted = Fixtures.event(1, ReservationAcceptedV2(), correlation: id)
        let onAccepted = coordinator.handle(.delivered(.event(accepted)), in: &state)
        // Then the answer is received, and the trace goes on awaiting the outcome
        #expect(onAccepted == [.trace(id, .receive(accepted))])
        #expect(state.requests.latest?.isTraced == true)
        // When the booking fails
        let failed = Fixtures.event(2, ReservationFailed(reservationID: "R1", reason: "no funds"), correlation: id)
        let onFailed = coordinator.handle(.delivered(.event(failed)), in: &state)
        // Then the outcome is received, and the trace ends failed
        #expect(onFailed == [.trace(id, .receive(failed)), .trace(id, .end(failure: "answered with \(failed.type)"))])
        #expect(state.requests.latest?.isTraced == false)
    }

    @Test func aConfirmedOutcomeEndsTheTraceWithoutAFailure() {
        // Given a traced reservation sent
        let id = EventID(high: 2, low: 9)
        var state = sent(reserve, id: id)
        // When its outcome, a confirmation, arrives (here before its answer)
        let confirmed = Fixtures.event(
            1, ReservationConfirmed(reservationID: "R1", confirmationCode: "C1"), correlation: id)
        let effects = coordinator.handle(.delivered(.event(confirmed)), in: &state)
        // Then the trace ends, not failed
        #expect(effects == [.trace(id, .receive(confirmed)), .trace(id, .end(failure: nil))])
    }

    @Test func aRequestTheBusDidNotTakeEndsItsTraceFailed() {
        // Given a traced request sent
        let id = EventID(high: 9, low: 1)
        var state = sent(CommandURL.Watchlist.add(base: "EUR", quote: "CHF"), id: id)
        // When the bus did not take it
        let effects = coordinator.handle(.publishFailed(id, reason: "the bus refused it: disk full"), in: &state)
        // Then it shows as failed, and its trace ends failed, as not published
        #expect(effects == [.trace(id, .end(failure: "not published"))])
        #expect(state.requests.latest?.status == .failed("the bus refused it: disk full"))
        #expect(state.requests.latest?.isTraced == false)
    }
}
