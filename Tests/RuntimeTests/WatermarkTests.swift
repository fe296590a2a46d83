import Runtime
import Testing

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
}
