import BureauSchemas
import Bus
import Testing

/// The bus's view of its consumers: lag computed from the last report and the head now.
struct ConsumerTableTests {
    static func report(
        _ consumer: String = "watchlist", process: String = "reducers", position: UInt64, applied: UInt64 = 0,
        outputs: UInt64 = 0, leaving: Bool = false
    ) -> Bureau_Bus_ConsumerProgress {
        var report = Bureau_Bus_ConsumerProgress()
        report.consumer = consumer
        report.process = process
        report.position = position
        report.live = true
        report.inputsApplied = applied
        report.outputs = outputs
        report.leaving = leaving
        return report
    }

    let start = ContinuousClock.now
    let wall = CommitTime(seconds: 1_800_000_000, nanos: 0)

    func wall(plus seconds: Int64) -> CommitTime { CommitTime(seconds: wall.seconds + seconds, nanos: 0) }

    @Test func aConsumerThatStopsReportingFallsBehindAsTheHeadAndTheClockMove() {
        var table = ConsumerTable()
        table.record(Self.report(position: 10), at: start)
        let caughtUp = table.statuses(head: 10, now: start, wallNow: wall)
        #expect(caughtUp.map(\.lagEvents) == [0])
        #expect(caughtUp.first?.lagTimeKnown == true && caughtUp.first?.lagMs == 0)

        // Nothing more from it; the head moves on.
        #expect(table.positionsWantingCommitTime(head: 25) == [10])
        table.learnCommitTime(after: 10, wall(plus: 1))
        let later = table.statuses(head: 25, now: start + .seconds(8), wallNow: wall(plus: 8))
        #expect(later.first?.lagEvents == 15)
        #expect(later.first?.lagMs == 7000)
        #expect(later.first?.progressAgeMs == 8000)
        let evenLater = table.statuses(head: 40, now: start + .seconds(20), wallNow: wall(plus: 20))
        #expect(evenLater.first?.lagEvents == 30)
        #expect(evenLater.first?.lagMs == 19000)
        #expect(evenLater.first?.progressAgeMs == 20000)
    }

    @Test func aLagWhoseOldestEventWasNotReadIsUnknownNotZero() {
        var table = ConsumerTable()
        table.record(Self.report(position: 3), at: start)
        let status = table.statuses(head: 9, now: start, wallNow: wall).first
        #expect(status?.lagEvents == 6)
        #expect(status?.lagTimeKnown == false)
    }

    @Test func aNewReportOfAnotherPositionForgetsTheOldCommitTime() {
        var table = ConsumerTable()
        table.record(Self.report(position: 3), at: start)
        table.learnCommitTime(after: 3, wall)
        table.record(Self.report(position: 7), at: start + .seconds(1))
        #expect(table.positionsWantingCommitTime(head: 9) == [7])
        #expect(table.statuses(head: 9, now: start, wallNow: wall).first?.lagTimeKnown == false)
    }

    @Test func aConsumerLeavingIsForgottenAndOneNeverHeardFromIsAbsent() {
        var table = ConsumerTable()
        table.record(Self.report("watchlist", position: 3), at: start)
        table.record(Self.report("alerts", position: 3), at: start)
        table.record(Self.report("watchlist", position: 3, leaving: true), at: start)
        #expect(table.statuses(head: 3, now: start, wallNow: wall).map(\.consumer) == ["alerts"])
    }

    @Test func ratesComeFromTheLastSecondsOfReportsAndARestartStartsThemAfresh() {
        var table = ConsumerTable()
        for second in 0...8 {
            table.record(
                Self.report(position: UInt64(second * 10), applied: UInt64(second * 100), outputs: UInt64(second * 50)),
                at: start + .seconds(second))
        }
        var status = table.statuses(head: 80, now: start + .seconds(8), wallNow: wall).first
        #expect(status?.recentWindowMs == 5000)
        #expect(status?.recentApplied == 500)
        #expect(status?.recentOutputs == 250)
        // Restarted: its counts begin again at 0.
        table.record(Self.report(position: 80, applied: 3, outputs: 1), at: start + .seconds(9))
        status = table.statuses(head: 80, now: start + .seconds(9), wallNow: wall).first
        #expect(status?.recentWindowMs == 0)
        #expect(status?.inputsApplied == 3)
    }

    /// A consumer that stops reporting has no known rates: not the last ones it had, which
    /// would make a frozen consumer look busy.
    @Test func aStoppedConsumersRatesAreUnknownOnceItsLastReportIsStale() {
        var table = ConsumerTable()
        for second in 0...5 {
            table.record(
                Self.report(position: UInt64(second * 10), applied: UInt64(second * 100), outputs: UInt64(second * 50)),
                at: start + .seconds(second))
        }
        // Given reports every second until second 5, then nothing
        let fresh = table.statuses(head: 50, now: start + .seconds(6), wallNow: wall).first
        #expect(fresh?.recentWindowMs == 5000 && fresh?.recentApplied == 500)
        // When the last report is older than the staleness bound
        let stale = table.statuses(
            head: 90, now: start + .seconds(5) + ConsumerTable.ratesStaleAfter + .milliseconds(1), wallNow: wall
        ).first
        // Then its rates are unknown (a window of 0), while its lag is still told
        #expect(stale?.recentWindowMs == 0 && stale?.recentApplied == 0 && stale?.recentOutputs == 0)
        #expect(stale?.lagEvents == 40)
    }

    @Test func theTableHoldsABoundedNumberOfConsumers() {
        var table = ConsumerTable()
        for index in 0..<(ConsumerTable.capacity + 10) {
            table.record(Self.report("c\(index)", position: 1), at: start)
        }
        #expect(table.count == ConsumerTable.capacity)
    }
}
