import Bus
import EventLog
import FrontEnd
import Guards
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
        // And the state says the link is down, and why
        #expect(!state.connection.isConnected && state.connection.problem == "the bus client was closed")
        #expect(state.connection.failures == 5)
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

    @Test func aPingAnsweredOrNotSetsTheLinkAndTheHead() {
        var state = AppState()
        _ = coordinator.handle(.pinged(head: 40, problem: nil), in: &state)
        #expect(state.connection.isConnected && state.connection.head == 40 && state.connection.problem == nil)
        _ = coordinator.handle(.pinged(head: nil, problem: "no answer to ping"), in: &state)
        #expect(!state.connection.isConnected && state.connection.problem == "no answer to ping")
        #expect(state.connection.head == 40, "the last head known is kept while the bus is away")
        _ = coordinator.handle(.delivered(.connection(isConnected: false)), in: &state)
        #expect(state.connection.problem == "no heartbeat")
    }
}
