import Guards
import Testing

@Suite(.timeLimit(.minutes(1)))
struct TimeoutTests {
    struct Refused: Error, Equatable {}

    @Test func aResultBeforeTheDeadlineIsReturned() async {
        let value = await Timeout.result(within: .seconds(30)) { 42 }
        #expect(value == 42)
    }

    @Test func anOperationThatNeverAnswersGivesNilAtTheDeadlineAndIsCancelled() async {
        let (noticed, signal) = AsyncStream<Bool>.makeStream()
        let value = await Timeout.result(within: .milliseconds(50)) { () async -> Int in
            // Sleeps until cancelled: without the timeout this would not return for an hour.
            try? await Task.sleep(for: .seconds(3600))
            signal.yield(Task.isCancelled)
            return 1
        }
        #expect(value == nil)
        var iterator = noticed.makeAsyncIterator()
        #expect(await iterator.next() == true)
    }

    @Test func anErrorBeforeTheDeadlineIsThrown() async {
        await #expect(throws: Refused.self) {
            _ = try await Timeout.result(within: .seconds(30)) { () async throws(Refused) -> Int in throw Refused() }
        }
    }

    @Test func cancellingTheCallerEndsTheWaitWithNil() async {
        let waiting = Task {
            await Timeout.result(within: .seconds(3600)) { () async -> Int in
                try? await Task.sleep(for: .seconds(3600))
                return 1
            }
        }
        waiting.cancel()
        #expect(await waiting.value == nil)
    }
}
