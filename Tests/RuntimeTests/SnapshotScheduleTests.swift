import Guards
import Testing

@testable import Runtime

/// When a reducer host saves its snapshot: every N inputs applied live, and after a failed save
/// not before the backoff has passed.
struct SnapshotScheduleTests {
    let start = ContinuousClock.now

    @Test func aSaveIsDueEveryNInputs() {
        // Given a schedule of a save every 3 inputs
        var schedule = SnapshotSchedule(every: 3, retry: Backoff(initial: .seconds(1), jitter: 0))
        // When two inputs are applied, then a third
        schedule.applied()
        schedule.applied()
        #expect(!schedule.isDue(at: start))
        schedule.applied()
        // Then a save is due; once saved, the count starts again
        #expect(schedule.isDue(at: start))
        #expect(schedule.saved() == 0)
        #expect(schedule.sinceSaved == 0 && !schedule.isDue(at: start))
    }

    @Test func afterAFailedSaveTheNextWaitsForTheBackoffEvenWhenInputsAreDue() {
        // Given a schedule whose save is due
        var schedule = SnapshotSchedule(every: 1, retry: Backoff(initial: .seconds(1), maximum: .seconds(4), jitter: 0))
        schedule.applied()
        // When the save fails twice in a row
        #expect(schedule.failed(at: start) == .seconds(1))
        #expect(schedule.failed(at: start) == .seconds(2))
        // Then another input does not make it due before the delay has passed, and does after
        schedule.applied()
        #expect(!schedule.isDue(at: start + .milliseconds(1_999)))
        #expect(schedule.isDue(at: start + .seconds(2)))
        // And the save that succeeds says how many failed before it, and clears the wait
        #expect(schedule.saved() == 2)
        #expect(schedule.failedSaves == 0 && schedule.retryAt == nil)
        schedule.applied()
        #expect(schedule.isDue(at: start))
    }
}
