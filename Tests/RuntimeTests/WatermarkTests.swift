import Testing

@testable import Runtime

/// A value that only grows, and the tasks waiting for it.
@Suite(.timeLimit(.minutes(1)))
struct WatermarkTests {
    @Test func aWaiterForAMarkAlreadyReachedReturnsAtOnceAndTheValueNeverGoesBack() async {
        let mark = Watermark()
        mark.advance(to: 10)
        mark.advance(to: 4)
        await mark.wait(until: 10)
        mark.add(5)
        #expect(mark.value == 15)
    }

    @Test func everyWaiterIsWokenOnceTheValueReachesItsMarkWhileUpdatesRace() async {
        // Many waiters queue while two tasks move the value one step at a time: none may miss
        // the step that reaches its mark (the test's time limit catches one that does).
        let mark = Watermark()
        await withTaskGroup(of: Void.self) { group in
            for waiter in 1...200 {
                group.addTask { await mark.wait(until: UInt64(waiter * 50)) }
            }
            group.addTask {
                for value in stride(from: 1, through: 10_000, by: 2) { mark.advance(to: UInt64(value)) }
            }
            group.addTask {
                for value in stride(from: 2, through: 10_000, by: 2) { mark.advance(to: UInt64(value)) }
            }
        }
        #expect(mark.value == 10_000)
    }

    @Test func aWaiterForALowerMarkThatCameLaterIsWokenWhenTheValueReachesIt() async {
        // Updates that reach no waiter's mark take no lock; a later waiter for a lower mark must
        // still be woken by the update that reaches its mark, not by a later one (the suite's
        // time limit catches a waiter that is not).
        let mark = Watermark()
        let far = Task { await mark.wait(until: 1_000) }
        while mark.waiterCount < 1 { await Task.yield() }
        let near = Task { await mark.wait(until: 10) }
        while mark.waiterCount < 2 { await Task.yield() }
        for value in 1...10 { mark.advance(to: UInt64(value)) }
        await near.value
        #expect(mark.value == 10)
        mark.advance(to: 1_000)
        await far.value
    }
}
