import Testing

@testable import BookingAdapter

/// The checkpoint the booking adapter may save: never past work that is not done.
@Suite struct OpenWorkTests {
    @Test func aCheckpointStopsBeforeTheOldestWorkNotDone() {
        // Given works at 3 and 5, open
        let work = OpenWork(start: 0)
        work.open(3)
        work.open(5)
        // When the later one finishes, then the checkpoint stops before the earlier
        #expect(work.finish(5) == 2)
        // When the earlier one finishes, then everything seen is done
        #expect(work.finish(3) == 5)
    }

    @Test func openingAWorkMarksItSeenSoThatItsOwnFinishMovesTheCheckpoint() {
        // Given a work opened with no event seen before it
        let work = OpenWork(start: 0)
        work.open(7)
        // When it finishes, then the checkpoint covers it
        #expect(work.finish(7) == 7)
    }

    @Test func eventsThatAskForNoWorkMoveTheCheckpointOnlyOnceTheWorkBeforeThemIsDone() {
        // Given a work at 4, open, and events asking for nothing at 5 and 6
        let work = OpenWork(start: 2)
        work.open(4)
        work.saw(5)
        work.saw(6)
        // When the work finishes, then the checkpoint covers the events after it
        #expect(work.finish(4) == 6)
        // And a checkpoint that does not move is not saved again
        #expect(work.finish(4) == nil)
    }
}
