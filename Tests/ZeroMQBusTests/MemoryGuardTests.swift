import Guards
import Testing

@testable import ZeroMQBus

/// The policy behind the memory watch: past the limit, drop every connection; while memory stays
/// over, again at most once per interval.
struct MemoryGuardTests {
    let start = ContinuousClock.now

    @Test func withinTheLimitNothingIsDropped() {
        var policy = MemoryGuard(limit: 100, interval: .seconds(1))
        #expect(policy.sample(resident: 100, at: start) == .keep)
        #expect(policy.drops == 0)
    }

    @Test func memoryThatStaysOverWithoutGrowingIsDroppedOncePerInterval() {
        // Given a limit of 100 MiB, an interval of a second and a regrowth of 16 MiB,
        var policy = MemoryGuard(limit: 100 << 20, interval: .seconds(1), regrowth: 16 << 20)
        // when memory goes past it, connections are dropped;
        #expect(policy.sample(resident: 150 << 20, at: start) == .dropConnections)
        // while it stays over without growing (the daemon's own memory), not again within the interval;
        #expect(policy.sample(resident: 150 << 20, at: start + .milliseconds(999)) == .keep)
        // once the interval has passed, again.
        #expect(policy.sample(resident: 150 << 20, at: start + .seconds(1)) == .dropConnections)
        #expect(policy.drops == 2)
    }

    @Test func memoryBackUnderTheLimitRearmsTheGuardAtOnce() {
        var policy = MemoryGuard(limit: 100 << 20, interval: .seconds(1), regrowth: 16 << 20)
        #expect(policy.sample(resident: 200 << 20, at: start) == .dropConnections)
        // The drop gave the memory back; a peer that reconnects and sends again is dropped at once.
        #expect(policy.sample(resident: 50 << 20, at: start + .milliseconds(10)) == .keep)
        #expect(policy.sample(resident: 101 << 20, at: start + .milliseconds(15)) == .dropConnections)
    }

    @Test func memoryGrowingAgainFromItsLowestSinceADropIsDroppedWithinTheInterval() {
        var policy = MemoryGuard(limit: 100 << 20, interval: .seconds(1), regrowth: 16 << 20)
        #expect(policy.sample(resident: 200 << 20, at: start) == .dropConnections)
        // Over the limit still (the daemon holds 120 MiB of its own), then growing again.
        #expect(policy.sample(resident: 120 << 20, at: start + .milliseconds(10)) == .keep)
        #expect(policy.sample(resident: 135 << 20, at: start + .milliseconds(15)) == .keep)
        #expect(policy.sample(resident: 136 << 20, at: start + .milliseconds(20)) == .dropConnections)
    }

    @Test func aDaemonFarUnderItsLimitSamplesAtTheLongestWait() {
        // Given a limit of 1 GiB and 10 MiB resident, memory growing at the fastest needs
        // 126 ms to reach the limit;
        let policy = MemoryGuard(limit: 1 << 30)
        // the watch waits the longest, 100 ms.
        #expect(policy.wait(after: 10 << 20) == .milliseconds(100))
    }

    @Test func nearerTheLimitTheWatchSamplesSoonerAndOverItAtTheShortestWait() {
        let policy = MemoryGuard(limit: 160 << 20)
        // 80 MiB of headroom at 8 MiB a millisecond: 10 ms.
        #expect(policy.wait(after: 80 << 20) == .milliseconds(10))
        // Less than 5 ms of headroom, at the limit, over it: the shortest wait.
        #expect(policy.wait(after: 150 << 20) == .milliseconds(5))
        #expect(policy.wait(after: 160 << 20) == .milliseconds(5))
        #expect(policy.wait(after: 300 << 20) == .milliseconds(5))
    }

    @Test func memoryGrowingAtTheFastestCannotPassTheLimitBeforeTheNextSample() {
        // For every reading from nothing to the limit, in steps of 1 MiB: either the watch
        // waits the shortest, or memory growing at the fastest for the whole wait stays within
        // the limit.
        let policy = MemoryGuard(limit: 160 << 20)
        for resident in stride(from: 0, through: 160 << 20, by: 1 << 20) {
            let wait = policy.wait(after: resident)
            let grown = resident + MemoryGuard.fastestGrowth * Int(wait.inMilliseconds)
            #expect(wait == MemoryGuard.shortestWait || grown <= policy.limit, "after \(resident >> 20) MiB")
            #expect(wait >= MemoryGuard.shortestWait && wait <= MemoryGuard.longestWait)
        }
    }
}
