/// When the daemon drops every connection to bound its memory: the policy, a value.
///
/// libzmq receives a message whole before the daemon can read any of it, and sets no limit on
/// how many frames one message has (`ZMQ_MAXMSGSIZE` caps each frame, the high-water marks count
/// whole messages): a peer that sends one message of frames without end is held in memory until
/// it ends. No option of libzmq bounds that, so the daemon watches its anonymous resident memory
/// (``MemoryWatch``): past ``limit``, every connection is dropped, and with it whatever
/// messages libzmq was still receiving; producers send again (publishes are idempotent by id),
/// subscribers notice the gap and read the log. While memory stays over the limit (memory the
/// daemon itself holds, which dropping connections does not give back), it drops them again at
/// most once per ``interval``, unless memory has grown by ``regrowth`` from its lowest since the
/// last drop (a peer at it again) or fell back under the limit in between: the guard is never off.
struct MemoryGuard: Sendable {
    /// Anonymous resident memory, in bytes, past which connections are dropped.
    let limit: Int
    /// The least time between two drops while memory stays over the limit and does not grow.
    let interval: Duration
    /// How much memory may grow from its lowest since the last drop before connections are
    /// dropped again within ``interval``.
    let regrowth: Int
    /// When connections were last dropped, and the lowest memory seen since.
    private(set) var lastDrop: (at: ContinuousClock.Instant, lowest: Int)?
    /// How many times they have been dropped.
    private(set) var drops = 0

    enum Action: Equatable {
        /// Within the limit, or over it too soon after the last drop.
        case keep
        /// Drop every connection: memory is over the limit.
        case dropConnections
    }

    /// The fastest anonymous memory is taken to grow, in bytes a millisecond: 8 GiB a second,
    /// four times what one of libzmq's I/O threads was seen to receive over ipc (some ten
    /// megabytes in 5 ms). How long ``wait(after:)`` lets memory go unwatched rests on it.
    static let fastestGrowth = 8 << 20
    /// The shortest and the longest time between two samples.
    static let shortestWait: Duration = .milliseconds(5)
    static let longestWait: Duration = .milliseconds(100)

    init(limit: Int, interval: Duration = .seconds(1), regrowth: Int = 16 << 20) {
        self.limit = limit
        self.interval = interval
        self.regrowth = regrowth
    }

    /// What to do about `resident` bytes of anonymous resident memory, measured at `now`.
    mutating func sample(resident: Int, at now: ContinuousClock.Instant) -> Action {
        guard resident > limit else {
            // Under the limit again: the next time over is a new peer's doing, dropped at once.
            lastDrop = nil
            return .keep
        }
        if var last = lastDrop, now - last.at < interval {
            last.lowest = min(last.lowest, resident)
            lastDrop = last
            if resident < last.lowest + regrowth { return .keep }
        }
        lastDrop = (now, resident)
        drops += 1
        return .dropConnections
    }

    /// How long the watch may wait after a sample of `resident` bytes: the time memory growing at
    /// ``fastestGrowth`` takes to reach the limit, within ``shortestWait`` and ``longestWait``.
    /// Memory cannot pass the limit unseen for longer than it did when every wait was the
    /// shortest, and a daemon far under its limit samples a few times a second, not 200.
    func wait(after resident: Int) -> Duration {
        let headroom = limit - resident
        guard headroom > 0 else { return Self.shortestWait }
        let milliseconds = Int64(headroom / Self.fastestGrowth)
        return min(max(.milliseconds(milliseconds), Self.shortestWait), Self.longestWait)
    }
}
