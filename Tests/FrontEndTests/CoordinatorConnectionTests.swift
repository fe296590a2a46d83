import Bus
import EventLog
import FrontEnd
import Guards
import TerminalUI
import Testing

/// What the bus and its calls do to the front-end's state, through the coordinator alone: the
/// link going and coming back, and when to subscribe again.
struct CoordinatorConnectionTests {
    let coordinator = Coordinator(
        router: Fixtures.router, reconnect: Backoff(initial: .milliseconds(250), maximum: .seconds(2), jitter: 0))

    @Test func anEventDeliveredIsFoldedInAndRemembersWhereToResumeFrom() {
        // Given a front-end that has failed to subscribe twice
        var state = AppState(connection: Connection(isConnected: false, failures: 2))
        // When an event arrives
        let added = Fixtures.event(7, Fixtures.pairAdded("EUR", "CHF"))
        let effects = coordinator.handle(.delivered(.event(added)), in: &state)
        // Then it is shown, the next subscription starts after it, and the failures are forgotten
        #expect(effects.isEmpty)
        #expect(state.models.watchlist.pairs.map(\.description).contains("EUR/CHF"))
        #expect(state.connection.delivered == 7 && state.connection.head == 7)
        #expect(state.connection.failures == 0)
    }

    @Test func aURLDispatchedUnderAnIDIsRecordedPendingAndPublishedUnderIt() throws {
        // Given a front-end with no request sent
        var state = AppState()
        let id = EventID(high: 3, low: 5)
        // When the session hands back a URL to send, under the id it chose
        let effects = coordinator.handle(.dispatched("bureau://watchlist/add?base=EUR&quote=CHF", id: id), in: &state)
        // Then the request is pending under that id, and the one effect publishes it under the same id
        #expect(state.requests.latest?.id == id)
        #expect(state.requests.latest?.status == .pending)
        guard case .publish(let outgoing) = effects.first, effects.count == 1 else {
            Issue.record("expected one publish effect, got \(effects)")
            return
        }
        #expect(outgoing.id == id)
        #expect(outgoing.type == "bureau.watchlist.PairAddRequested")
    }

    @Test func aURLThatDoesNotRouteIsRecordedAsFailedWithTheRoutersReasonAndNothingIsPublished() {
        var state = AppState()
        let effects = coordinator.handle(
            .dispatched("bureau://watchlist/fly", id: EventID(high: 1, low: 1)), in: &state)
        #expect(effects.isEmpty)
        guard case .failed(let reason)? = state.requests.latest?.status else {
            Issue.record("expected a failed request, got \(String(describing: state.requests.latest))")
            return
        }
        #expect(reason.contains("fly"), "\(reason)")
        #expect(state.requests.latest?.id == nil)
    }

    @Test func aPublishTheBusRefusedMarksItsRequestFailed() {
        var state = AppState()
        let id = EventID(high: 9, low: 9)
        _ = coordinator.handle(.dispatched("bureau://watchlist/add?base=EUR&quote=CHF", id: id), in: &state)
        _ = coordinator.handle(.publishFailed(id, reason: "the bus refused it: disk full"), in: &state)
        #expect(state.requests.latest?.status == .failed("the bus refused it: disk full"))
    }

    @Test func aSubscriptionThatEndsIsTriedAgainAfterTheLastEventWithAGrowingBackoff() {
        // Given a front-end that has shown everything through position 12
        var state = AppState(connection: Connection(isConnected: true, head: 12, caughtUp: true, delivered: 12))
        // When the subscription ends five times in a row
        var delays: [Duration] = []
        for _ in 0..<5 {
            let effects = coordinator.handle(.subscriptionEnded(problem: "the bus client was closed"), in: &state)
            // Then each time it subscribes again after position 12, a little later each time, up to the cap
            guard case .subscribe(let position, let delay) = effects.first, effects.count == 1 else {
                Issue.record("expected one subscribe effect, got \(effects)")
                return
            }
            #expect(position == 12)
            delays.append(delay)
        }
        #expect(delays == [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(2)])
        // And the state says the link is down, and why, and that it is no longer caught up
        #expect(!state.connection.isConnected && state.connection.problem == "the bus client was closed")
        #expect(state.connection.failures == 5)
        #expect(!state.connection.caughtUp)
        // And once the bus answers again, the status line says it is catching up until the new
        // subscription has read the log
        _ = coordinator.handle(.pinged(head: 12, problem: nil), in: &state)
        var buffer = CellBuffer(width: 200, height: 1)
        StatusLine(connection: state.connection, latestError: nil).draw(in: &buffer, area: buffer.bounds)
        #expect(buffer.text.contains("catching up… head 12"), "\(buffer.text)")
    }

    @Test func aSessionThatStartsFollowsTheBusFromTheStartOfTheLog() {
        // Given a new front-end
        var state = AppState()
        // When its session starts
        let effects = coordinator.handle(.started, in: &state)
        // Then it subscribes after position 0, at once
        #expect(effects == [.subscribe(after: 0, delay: .zero)])
    }

    @Test func aHeartbeatThatComesBackBringsTheLinkBack() {
        // Given a front-end whose heartbeats stopped
        var state = AppState(connection: Connection(isConnected: true, head: 4, caughtUp: true))
        _ = coordinator.handle(.delivered(.connection(isConnected: false)), in: &state)
        #expect(!state.connection.isConnected && state.connection.problem == "no heartbeat")
        // When they come back
        let effects = coordinator.handle(.delivered(.connection(isConnected: true)), in: &state)
        // Then the link is up again and the problem is gone
        #expect(effects.isEmpty)
        #expect(state.connection.isConnected && state.connection.problem == nil)
    }

    @Test func catchingUpAgainBringsTheLinkBackAndResetsTheBackoff() {
        // Given a front-end whose subscription failed twice
        var state = AppState(connection: Connection(isConnected: false, head: 3, problem: "no heartbeat", failures: 2))
        // When the new subscription has read the log up to position 9
        _ = coordinator.handle(.delivered(.caughtUp(head: 9)), in: &state)
        // Then the link is up, caught up, at 9; the next failure waits the shortest delay again
        #expect(state.connection == Connection(isConnected: true, head: 9, caughtUp: true, problem: nil, failures: 0))
        let effects = coordinator.handle(.subscriptionEnded(problem: "x"), in: &state)
        #expect(effects == [.subscribe(after: 0, delay: .milliseconds(250))])
    }

    @Test func aPingAnsweredOrNotSetsTheLinkAndTheHeadAndSaysWhyItFailed() {
        // Given a front-end whose ping was answered at head 40
        var state = AppState()
        _ = coordinator.handle(.pinged(head: 40, problem: nil), in: &state)
        #expect(state.connection.isConnected && state.connection.head == 40 && state.connection.problem == nil)
        // When a ping goes unanswered (the session passes the ping's error along)
        let timeout = "\(BusError.noAnswer(endpoint: "ipc:///run/bus", seconds: 1))"
        _ = coordinator.handle(.pinged(head: nil, problem: timeout), in: &state)
        // Then the link is down, for that reason, and the last head known is kept
        #expect(!state.connection.isConnected && state.connection.problem == timeout)
        #expect(state.connection.head == 40, "the last head known is kept while the bus is away")
        // When the next is refused, then the reason says so instead
        let refusal = "\(BusError.connectionRefused(endpoint: "ipc:///run/bus", reason: "a key it does not allow"))"
        _ = coordinator.handle(.pinged(head: nil, problem: refusal), in: &state)
        #expect(state.connection.problem == refusal && refusal != timeout)
        // When the heartbeats stop, then that is the reason
        _ = coordinator.handle(.delivered(.connection(isConnected: false)), in: &state)
        #expect(state.connection.problem == "no heartbeat")
    }

    @Test func aBusWhoseLogEndsBeforeWhatWasShownStopsTheFrontEndForGoodAndSaysWhatToDo() {
        // Given a front-end that has shown everything through position 12
        var state = AppState(connection: Connection(isConnected: true, head: 12, caughtUp: true, delivered: 12))
        // When the bus answers its read with ahead-of-log: its log ends at 5 (a restored copy)
        let effects = coordinator.handle(.aheadOfLog(position: 12, head: 5, epoch: 7), in: &state)
        // Then it does not subscribe again (that would pass over positions 6 to 12 of this log)
        #expect(effects.isEmpty)
        #expect(!state.connection.isConnected && state.connection.head == 5)
        let stopped = state.connection.stopped ?? ""
        #expect(stopped.contains("ends at position 5 (daemon epoch 7)") && stopped.contains("before position 12"))
        #expect(stopped.contains("start it again"))
        // And nothing the bus says afterwards resumes it or hides why it stopped
        #expect(coordinator.handle(.subscriptionEnded(problem: "the bus client was closed"), in: &state).isEmpty)
        _ = coordinator.handle(.pinged(head: 6, problem: nil), in: &state)
        _ = coordinator.handle(.delivered(.connection(isConnected: true)), in: &state)
        #expect(!state.connection.isConnected && state.connection.stopped == stopped && state.connection.head == 6)
        // And the status line says so
        var buffer = CellBuffer(width: 400, height: 1)
        StatusLine(connection: state.connection, latestError: nil).draw(in: &buffer, area: buffer.bounds)
        #expect(buffer.text.contains("■ stopped: the bus's log ends at position 5"))
    }
}
