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

    @Test func pastTheLimitEveryConnectionIsDroppedOncePerInterval() {
        // Given a limit of 100 bytes and an interval of a second,
        var policy = MemoryGuard(limit: 100, interval: .seconds(1))
        // when memory goes past it, connections are dropped;
        #expect(policy.sample(resident: 101, at: start) == .dropConnections)
        // while it stays over within the interval (the daemon's own memory), not again;
        #expect(policy.sample(resident: 150, at: start + .milliseconds(999)) == .keep)
        // once the interval has passed, again.
        #expect(policy.sample(resident: 150, at: start + .seconds(1)) == .dropConnections)
        #expect(policy.drops == 2)
    }

    @Test func memoryBackUnderTheLimitThenOverAgainIsDroppedOnlyAfterTheInterval() {
        var policy = MemoryGuard(limit: 100, interval: .seconds(1))
        #expect(policy.sample(resident: 200, at: start) == .dropConnections)
        #expect(policy.sample(resident: 50, at: start + .milliseconds(10)) == .keep)
        #expect(policy.sample(resident: 200, at: start + .milliseconds(500)) == .keep)
        #expect(policy.sample(resident: 200, at: start + .milliseconds(1500)) == .dropConnections)
    }
}
