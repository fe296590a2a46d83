import Bus
import Testing

/// A commit time moved on by a duration, as a test's clock moves between inputs.
struct CommitTimeTests {
    @Test func nanosecondsPastASecondCarryIntoTheSeconds() {
        let time = CommitTime(seconds: 10, nanos: 900_000_000)
        #expect(time + .milliseconds(250) == CommitTime(seconds: 11, nanos: 150_000_000))
        #expect(time + .seconds(2) == CommitTime(seconds: 12, nanos: 900_000_000))
    }

    @Test func aNegativeDurationBorrowsFromTheSeconds() {
        let time = CommitTime(seconds: 10, nanos: 100_000_000)
        #expect(time + .milliseconds(-250) == CommitTime(seconds: 9, nanos: 850_000_000))
    }

    @Test func addingWhatASubtractionGaveReturnsToTheSameTime() {
        let earlier = CommitTime(seconds: 1_700_000_000, nanos: 999_999_999)
        let later = CommitTime(seconds: 1_700_000_123, nanos: 1)
        #expect(earlier + (later - earlier) == later)
    }
}
