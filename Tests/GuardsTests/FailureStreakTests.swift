import Guards
import Testing

struct FailureStreakTests {
    @Test func aFailureThatPersistsIsToldOnceWhenItStartsAndCountedWhenItEnds() {
        var streak = FailureStreak()
        // Given a success, then three failures in a row
        let before = streak.succeeded()
        let told = [streak.failed(), streak.failed(), streak.failed()]
        // When a turn succeeds
        let ended = streak.succeeded()
        // Then only the first failure was to be told, the streak it ends is counted, and the next
        // failure is told again
        #expect(before == 0)
        #expect(told == [true, false, false])
        #expect(ended == 3)
        #expect(streak.count == 0)
        let next = streak.failed()
        #expect(next)
    }
}
