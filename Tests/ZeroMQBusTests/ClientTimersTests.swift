import Testing

@testable import ZeroMQBus

/// The bus client's retries and deadlines, without sockets or a clock: each input at a given
/// instant, and exactly what comes due and when.
struct ClientTimersTests {
    static let origin = ContinuousClock.now

    /// The instant `milliseconds` after the test's origin.
    static func at(_ milliseconds: Int) -> ContinuousClock.Instant {
        origin + .milliseconds(milliseconds)
    }

    /// The client's default schedule: retries from 250 ms doubling up to 2 s, reads timed out
    /// after 2 s.
    static func timers() -> ClientTimers {
        ClientTimers(firstRetry: .milliseconds(250), maxRetry: .seconds(2), readTimeout: .seconds(2))
    }

    /// Timers with subscription `id` started at 0 whose bus beats once a minute, so that its
    /// silence is not what a test looks at.
    static func subscribedWithQuietBus(_ id: Int = 7) -> ClientTimers {
        var timers = timers()
        timers.subscribed(id, now: at(0))
        _ = timers.heartbeat(for: id, interval: .seconds(60), now: at(0))
        return timers
    }

    /// When `timers` ask to be woken after `now`, both in milliseconds after the origin (read
    /// as such in a failure).
    static func nextWake(_ timers: ClientTimers, after now: Int) -> Double {
        (timers.nextWake(after: at(now)) - origin) / .milliseconds(1)
    }

    /// Wakes whenever the timers ask, from `start` to `end` (in milliseconds after the origin),
    /// and returns each wake-up that had something due (in milliseconds after the origin), with
    /// what was due.
    static func run(
        _ timers: inout ClientTimers, from start: Int, until end: Int
    ) -> [(Double, [ClientTimers.Action])] {
        var due: [(Double, [ClientTimers.Action])] = []
        var now = at(start)
        // Bounded, so that timers that ask to wake without anything coming due fail the test
        // instead of hanging it.
        for _ in 0..<1000 {
            now = timers.nextWake(after: now)
            guard now <= at(end) else { return due }
            let actions = timers.advance(to: now)
            if !actions.isEmpty { due.append(((now - origin) / .milliseconds(1), actions)) }
        }
        Issue.record("the timers woke 1000 times before \(end) ms")
        return due
    }

    // MARK: Publishes

    @Test func anUnansweredPublishIsSentAgainAfterIntervalsThatDoubleUpToTheCap() {
        var timers = Self.timers()
        timers.publishSent(1, deadline: Self.at(10_000), now: Self.at(0))

        let due = Self.run(&timers, from: 0, until: 9_999)

        // 250, then 500, 1000, 2000 ms apart, and 2000 from then on.
        #expect(due.map(\.0) == [250, 750, 1750, 3750, 5750, 7750, 9750])
        #expect(due.allSatisfy { $0.1 == [.resendPublish(1)] })
    }

    @Test func aPublishIsNotSentAgainBeforeItsFirstRetry() {
        var timers = Self.timers()
        timers.publishSent(1, deadline: Self.at(10_000), now: Self.at(0))

        #expect(timers.advance(to: Self.at(249)) == [])
        #expect(Self.nextWake(timers, after: 249) == 250)
        #expect(timers.advance(to: Self.at(250)) == [.resendPublish(1)])
    }

    @Test func aLateWakeUpCountsTheNextIntervalFromTheRetryNotFromWhenItWasDue() {
        var timers = Self.timers()
        timers.publishSent(1, deadline: Self.at(10_000), now: Self.at(0))

        #expect(timers.advance(to: Self.at(400)) == [.resendPublish(1)])

        #expect(Self.nextWake(timers, after: 400) == 900)
        #expect(timers.advance(to: Self.at(899)) == [])
        #expect(timers.advance(to: Self.at(900)) == [.resendPublish(1)])
    }

    @Test func aFirstRetryLongerThanTheCapIsWaitedOnceThenTheCapHolds() {
        var timers = ClientTimers(firstRetry: .seconds(3), maxRetry: .seconds(2), readTimeout: .seconds(2))
        timers.publishSent(1, deadline: Self.at(60_000), now: Self.at(0))

        let due = Self.run(&timers, from: 0, until: 9_000)

        #expect(due.map(\.0) == [3000, 5000, 7000, 9000])
    }

    @Test func aPublishPastItsDeadlineFailsExactlyOnce() {
        var timers = Self.timers()
        timers.publishSent(1, deadline: Self.at(1_000), now: Self.at(0))

        let due = Self.run(&timers, from: 0, until: 10_000)

        #expect(due.map(\.0) == [250, 750, 1000])
        #expect(due.last?.1 == [.failPublish(1)])
        #expect(timers.advance(to: Self.at(20_000)) == [])
    }

    @Test func aPublishWhoseRetryAndDeadlineFallTogetherFailsWithoutBeingSentAgain() {
        var timers = Self.timers()
        timers.publishSent(1, deadline: Self.at(250), now: Self.at(0))

        #expect(timers.advance(to: Self.at(250)) == [.failPublish(1)])
        #expect(timers.advance(to: Self.at(500)) == [])
    }

    @Test func anAnsweredPublishIsForgotten() {
        var timers = Self.timers()
        timers.publishSent(1, deadline: Self.at(1_000), now: Self.at(0))
        _ = timers.advance(to: Self.at(250))

        timers.publishSettled(1)

        #expect(timers.advance(to: Self.at(750)) == [])
        #expect(timers.advance(to: Self.at(5_000)) == [])
        #expect(Self.nextWake(timers, after: 300) == 1_300, "nothing is due: the longest sleep")
    }

    @Test func publishesDueTogetherComeInOrderOfRequestID() {
        var timers = Self.timers()
        timers.publishSent(3, deadline: Self.at(10_000), now: Self.at(0))
        timers.publishSent(1, deadline: Self.at(200), now: Self.at(0))
        timers.publishSent(2, deadline: Self.at(10_000), now: Self.at(0))

        #expect(timers.advance(to: Self.at(250)) == [.failPublish(1), .resendPublish(2), .resendPublish(3)])
    }

    // MARK: Pings

    @Test func anUnansweredPingFailsAtItsDeadlineExactlyOnce() {
        var timers = Self.timers()
        timers.pingSent(5, deadline: Self.at(300))

        #expect(Self.nextWake(timers, after: 0) == 300)
        #expect(timers.advance(to: Self.at(299)) == [])
        #expect(timers.advance(to: Self.at(300)) == [.failPing(5)])
        #expect(timers.advance(to: Self.at(600)) == [])
        #expect(Self.nextWake(timers, after: 600) == 1_600)
    }

    @Test func anAnsweredPingIsForgotten() {
        var timers = Self.timers()
        timers.pingSent(5, deadline: Self.at(300))

        timers.pingSettled(5)

        #expect(timers.advance(to: Self.at(300)) == [])
        #expect(Self.nextWake(timers, after: 0) == 1_000)
    }

    @Test func pingsDueTogetherComeAfterPublishesInOrderOfRequestID() {
        var timers = Self.timers()
        timers.pingSent(9, deadline: Self.at(100))
        timers.pingSent(4, deadline: Self.at(100))
        timers.publishSent(20, deadline: Self.at(100), now: Self.at(0))

        #expect(timers.advance(to: Self.at(100)) == [.failPublish(20), .failPing(4), .failPing(9)])
    }

    // MARK: Heartbeats

    @Test func aBusSilentForThreeHeartbeatIntervalsIsDisconnectedOnce() {
        var timers = Self.timers()
        timers.subscribed(7, now: Self.at(0))

        #expect(timers.advance(to: Self.at(1_499)) == [])
        #expect(timers.advance(to: Self.at(1_500)) == [.disconnected(subscription: 7)])
        #expect(timers.advance(to: Self.at(1_600)) == [])
        #expect(timers.advance(to: Self.at(60_000)) == [])
    }

    @Test func theFirstTimeTheBusIsHeardItIsConnectedAndAfterThatItIsNoNews() {
        var timers = Self.timers()
        timers.subscribed(7, now: Self.at(0))

        #expect(timers.heard(from: 7, now: Self.at(10)) == .connected(subscription: 7))
        #expect(timers.heard(from: 7, now: Self.at(20)) == nil)
        #expect(timers.heartbeat(for: 7, interval: .milliseconds(500), now: Self.at(30)) == nil)
    }

    @Test func hearingTheBusKeepsASubscriptionConnected() {
        var timers = Self.timers()
        timers.subscribed(7, now: Self.at(0))
        _ = timers.heard(from: 7, now: Self.at(0))

        _ = timers.heard(from: 7, now: Self.at(1_000))

        #expect(timers.advance(to: Self.at(2_499)) == [])
        #expect(Self.nextWake(timers, after: 2_000) == 2_500)
        #expect(timers.advance(to: Self.at(2_500)) == [.disconnected(subscription: 7)])
    }

    @Test func aDisconnectedBusHeardAgainIsConnectedAndCanBeDisconnectedAgain() {
        var timers = Self.timers()
        timers.subscribed(7, now: Self.at(0))
        _ = timers.heard(from: 7, now: Self.at(0))
        #expect(timers.advance(to: Self.at(1_500)) == [.disconnected(subscription: 7)])

        #expect(timers.heard(from: 7, now: Self.at(3_000)) == .connected(subscription: 7))

        #expect(timers.advance(to: Self.at(4_499)) == [])
        #expect(timers.advance(to: Self.at(4_500)) == [.disconnected(subscription: 7)])
        #expect(timers.advance(to: Self.at(9_000)) == [])
    }

    @Test func theHeartbeatIntervalTheBusNamesSetsHowLongASilenceIsTolerated() {
        var timers = Self.timers()
        timers.subscribed(7, now: Self.at(0))

        #expect(timers.heartbeat(for: 7, interval: .seconds(2), now: Self.at(0)) == .connected(subscription: 7))

        #expect(timers.advance(to: Self.at(5_999)) == [])
        #expect(timers.advance(to: Self.at(6_000)) == [.disconnected(subscription: 7)])
    }

    @Test func aHeartbeatThatNamesNoIntervalKeepsTheOneKnown() {
        var timers = Self.timers()
        timers.subscribed(7, now: Self.at(0))
        _ = timers.heartbeat(for: 7, interval: .seconds(2), now: Self.at(0))

        _ = timers.heartbeat(for: 7, interval: .zero, now: Self.at(1_000))

        #expect(timers.advance(to: Self.at(6_999)) == [])
        #expect(timers.advance(to: Self.at(7_000)) == [.disconnected(subscription: 7)])
    }

    @Test func anEndedSubscriptionHasNothingDueAndIsNotHeard() {
        var timers = Self.timers()
        timers.subscribed(7, now: Self.at(0))
        timers.readSent(for: 7, requestID: 42, after: 0, now: Self.at(0))

        timers.unsubscribed(7)

        #expect(timers.advance(to: Self.at(10_000)) == [])
        #expect(timers.heard(from: 7, now: Self.at(10_000)) == nil)
        #expect(timers.read(answeredBy: 42) == nil)
        #expect(!timers.mayRequestRead(for: 7, now: Self.at(10_000)))
    }

    @Test func subscriptionsDueTogetherComeInOrderOfIDWithTheReadFirst() {
        var timers = Self.timers()
        timers.subscribed(9, now: Self.at(0))
        timers.subscribed(2, now: Self.at(0))
        timers.readSent(for: 9, requestID: 1, after: 0, now: Self.at(0))

        #expect(
            timers.advance(to: Self.at(2_000)) == [
                .disconnected(subscription: 2), .readTimedOut(subscription: 9), .disconnected(subscription: 9),
            ])
    }

    // MARK: Catch-up reads

    @Test func aNewSubscriptionMayReadAtOnce() {
        var timers = Self.subscribedWithQuietBus()

        #expect(timers.mayRequestRead(for: 7, now: Self.at(0)))
        #expect(!timers.mayRequestRead(for: 8, now: Self.at(0)), "an unknown subscription reads nothing")
        #expect(timers.advance(to: Self.at(0)) == [])
    }

    @Test func aReadInFlightIsAwaitedAndNoSecondOneIsSent() {
        var timers = Self.subscribedWithQuietBus()

        timers.readSent(for: 7, requestID: 42, after: 0, now: Self.at(0))

        #expect(!timers.mayRequestRead(for: 7, now: Self.at(1_000)))
        #expect(timers.read(answeredBy: 42)?.subscription == 7)
        #expect(timers.read(answeredBy: 43) == nil)
        #expect(Self.nextWake(timers, after: 1_500) == 2_000)
    }

    @Test func anUnansweredReadTimesOutOnceAndMayBeSentAgain() {
        var timers = Self.subscribedWithQuietBus()
        timers.readSent(for: 7, requestID: 42, after: 0, now: Self.at(0))

        #expect(timers.advance(to: Self.at(1_999)) == [])
        #expect(timers.advance(to: Self.at(2_000)) == [.readTimedOut(subscription: 7)])

        #expect(timers.mayRequestRead(for: 7, now: Self.at(2_000)))
        #expect(timers.read(answeredBy: 42)?.subscription == 7, "a late reply to it still answers it")
        #expect(timers.read(answeredBy: 42)?.late == true)
        #expect(timers.advance(to: Self.at(5_000)) == [])
    }

    /// A bus slower than the read timeout answers every read late: were only the newest read's
    /// reply taken, the subscription would never get on.
    @Test func readsThatTimedOutAreRememberedTheNewestUntilOneIsAnswered() {
        var timers = Self.subscribedWithQuietBus()
        let sent = UInt64(ClientTimers.lateReadsKept + 1)
        for request in UInt64(1)...sent {
            timers.readSent(for: 7, requestID: request, after: 10 * request, now: Self.at(Int(request) * 2_000))
            _ = timers.advance(to: Self.at(Int(request) * 2_000 + 2_000))
        }
        #expect(timers.read(answeredBy: 1) == nil, "only the newest are kept")
        #expect(timers.read(answeredBy: 2)?.after == 20)
        #expect(timers.read(answeredBy: sent)?.after == 10 * sent)

        timers.readSent(for: 7, requestID: sent + 1, after: 10 * sent, now: Self.at(Int(sent) * 2_000 + 2_000))
        #expect(timers.read(answeredBy: sent + 1)?.late == false)
        _ = timers.readAnswered(for: 7, now: Self.at(Int(sent) * 2_000 + 2_100))
        #expect(timers.read(answeredBy: sent) == nil, "answered: what a late reply would say is known")
        #expect(timers.read(answeredBy: sent + 1) == nil)
        #expect(timers.mayRequestRead(for: 7, now: Self.at(Int(sent) * 2_000 + 2_100)))
    }

    @Test func aLateReplyRefusedWithNoReadInFlightDelaysTheNextByTheReadTimeout() {
        var timers = Self.subscribedWithQuietBus()
        timers.readSent(for: 7, requestID: 42, after: 0, now: Self.at(0))
        _ = timers.advance(to: Self.at(2_000))

        _ = timers.readRefused(for: 7, requestID: 42, now: Self.at(2_100))

        #expect(timers.read(answeredBy: 42) == nil, "a reply is taken once")
        #expect(!timers.mayRequestRead(for: 7, now: Self.at(4_099)))
        #expect(timers.mayRequestRead(for: 7, now: Self.at(4_100)))
    }

    @Test func anAnsweredReadIsNoLongerInFlightAndHearsTheBus() {
        var timers = Self.timers()
        timers.subscribed(7, now: Self.at(0))
        timers.readSent(for: 7, requestID: 42, after: 0, now: Self.at(0))

        #expect(timers.readAnswered(for: 7, now: Self.at(100)) == .connected(subscription: 7))

        #expect(timers.mayRequestRead(for: 7, now: Self.at(100)))
        #expect(timers.read(answeredBy: 42) == nil)
        #expect(timers.advance(to: Self.at(1_599)) == [], "no read timeout, and silence counted from the answer")
        #expect(timers.advance(to: Self.at(1_600)) == [.disconnected(subscription: 7)])
    }

    @Test func aRefusedReadIsAskedAgainAfterTheReadTimeoutNotAtOnce() {
        var timers = Self.subscribedWithQuietBus()
        timers.readSent(for: 7, requestID: 42, after: 0, now: Self.at(0))

        #expect(
            timers.readRefused(for: 7, requestID: 42, now: Self.at(1_000)) == nil, "the heartbeat already connected it")

        #expect(!timers.mayRequestRead(for: 7, now: Self.at(1_000)))
        #expect(timers.read(answeredBy: 42)?.subscription == 7)
        #expect(timers.advance(to: Self.at(2_999)) == [])
        #expect(timers.advance(to: Self.at(3_000)) == [.readTimedOut(subscription: 7)])
        #expect(timers.mayRequestRead(for: 7, now: Self.at(3_000)))
    }

    @Test func aRefusedReadHearsTheBus() {
        var timers = Self.timers()
        timers.subscribed(7, now: Self.at(0))
        timers.readSent(for: 7, requestID: 42, after: 0, now: Self.at(0))

        #expect(timers.readRefused(for: 7, requestID: 42, now: Self.at(1_000)) == .connected(subscription: 7))
        #expect(timers.advance(to: Self.at(2_499)) == [])
        #expect(timers.advance(to: Self.at(2_500)) == [.disconnected(subscription: 7)])
    }

    @Test func aReadThatCouldNotBeSentIsTriedAgainAfterTheRetryInterval() {
        var timers = Self.subscribedWithQuietBus()

        timers.readNotSent(for: 7, now: Self.at(1_000))

        #expect(ClientTimers.readRetryInterval == .milliseconds(100))
        #expect(!timers.mayRequestRead(for: 7, now: Self.at(1_099)))
        #expect(Self.nextWake(timers, after: 1_000) == 1_100)
        #expect(timers.mayRequestRead(for: 7, now: Self.at(1_100)))
        #expect(timers.advance(to: Self.at(1_100)) == [], "a retry is the worker's to send, not an action")
    }

    @Test func aRetryThatIsDueButCannotBeSentForAFullChannelDoesNotWakeTheWorkerAtOnce() {
        var timers = Self.subscribedWithQuietBus()
        timers.readNotSent(for: 7, now: Self.at(1_000))

        // The consumer has not made room by 1 150: the worker waits for it, not for the retry.
        #expect(timers.mayRequestRead(for: 7, now: Self.at(1_150)))
        #expect(Self.nextWake(timers, after: 1_150) == 2_150, "the longest sleep, not at once")
    }

    @Test func aReadSentAfterARetryClearsTheRetry() {
        var timers = Self.subscribedWithQuietBus()
        timers.readNotSent(for: 7, now: Self.at(1_000))

        timers.readSent(for: 7, requestID: 42, after: 0, now: Self.at(1_100))
        _ = timers.readAnswered(for: 7, now: Self.at(1_200))

        #expect(timers.mayRequestRead(for: 7, now: Self.at(1_200)))
        #expect(Self.nextWake(timers, after: 1_200) == 2_200, "no retry left to wake for")
    }

    // MARK: Waking

    @Test func withNothingPendingTheWorkerSleepsTheLongestSleep() {
        let timers = Self.timers()

        #expect(ClientTimers.longestSleep == .seconds(1))
        #expect(Self.nextWake(timers, after: 0) == 1_000)
    }

    @Test func theNextWakeIsTheEarliestOfEveryRetryAndDeadline() {
        var timers = Self.timers()
        timers.subscribed(7, now: Self.at(0))
        #expect(Self.nextWake(timers, after: 0) == 1_000, "the longest sleep before the silence")
        #expect(Self.nextWake(timers, after: 600) == 1_500, "the silence")

        timers.readSent(for: 7, requestID: 42, after: 0, now: Self.at(-600))
        #expect(Self.nextWake(timers, after: 600) == 1_400, "the read timeout")

        timers.pingSent(5, deadline: Self.at(1_300))
        #expect(Self.nextWake(timers, after: 600) == 1_300, "the ping's deadline")

        timers.publishSent(1, deadline: Self.at(1_200), now: Self.at(1_000))
        #expect(Self.nextWake(timers, after: 600) == 1_200, "the publish's deadline")

        timers.publishSent(2, deadline: Self.at(10_000), now: Self.at(900))
        #expect(Self.nextWake(timers, after: 600) == 1_150, "the publish's retry")
    }

    @Test func somethingAlreadyDueMakesTheNextWakeNoLaterThanNow() {
        var timers = Self.timers()
        timers.subscribed(7, now: Self.at(0))

        #expect(Self.nextWake(timers, after: 2_000) == 1_500)
    }

    @Test func aSubscriptionKnownToBeDisconnectedDoesNotWakeTheWorkerForItsSilence() {
        var timers = Self.timers()
        timers.subscribed(7, now: Self.at(0))
        #expect(timers.advance(to: Self.at(1_500)) == [.disconnected(subscription: 7)])

        // Its silence deadline (1.5 s) has passed for good: waking for it would spin.
        #expect(Self.nextWake(timers, after: 1_500) == 2_500)
        #expect(Self.nextWake(timers, after: 30_000) == 31_000)

        _ = timers.heard(from: 7, now: Self.at(30_000))
        #expect(Self.nextWake(timers, after: 30_000) == 31_000)
        #expect(Self.nextWake(timers, after: 30_600) == 31_500, "connected: its silence counts again")
    }

    @Test func theWorkerPollsUntilTheWakeRoundedUpAndNotAtAllOnceItPassed() {
        #expect(ClientWorker.pollTimeout(until: Self.at(250), now: Self.at(0)) == 251)
        #expect(ClientWorker.pollTimeout(until: Self.at(0) + .microseconds(500), now: Self.at(0)) == 1)
        #expect(ClientWorker.pollTimeout(until: Self.at(0), now: Self.at(0)) == 1)
        #expect(ClientWorker.pollTimeout(until: Self.at(0), now: Self.at(1)) == 0)
        #expect(ClientWorker.pollTimeout(until: Self.at(0), now: Self.at(50)) == 0)
    }
}
