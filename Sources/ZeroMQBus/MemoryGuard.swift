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
/// most once per ``interval``.
struct MemoryGuard: Sendable {
    /// Anonymous resident memory, in bytes, past which connections are dropped.
    let limit: Int
    /// The least time between two drops.
    let interval: Duration
    /// When connections were last dropped.
    private(set) var lastDrop: ContinuousClock.Instant?
    /// How many times they have been dropped.
    private(set) var drops = 0

    enum Action: Equatable {
        /// Within the limit, or over it too soon after the last drop.
        case keep
        /// Drop every connection: memory is over the limit.
        case dropConnections
    }

    init(limit: Int, interval: Duration = .seconds(1)) {
        self.limit = limit
        self.interval = interval
    }

    /// What to do about `resident` bytes of anonymous resident memory, measured at `now`.
    mutating func sample(resident: Int, at now: ContinuousClock.Instant) -> Action {
        guard resident > limit else { return .keep }
        if let lastDrop, now - lastDrop < interval { return .keep }
        lastDrop = now
        drops += 1
        return .dropConnections
    }
}
