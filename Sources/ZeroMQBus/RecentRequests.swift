/// The publish requests the daemon admitted most recently, by request id: what a request's
/// `follows` frame is checked against (README, "Several requests in flight, in order").
///
/// A request that names one it follows is admitted only if that one was admitted before it,
/// in an earlier wake-up or earlier in the same one; otherwise it is answered `out-of-order`
/// and nothing of it is stored. Bounded: the oldest ids are forgotten first, and one forgotten
/// (or never seen, as after the daemon restarts) only costs its follower a refusal, after which
/// the producer sends it again following nothing once the request before it is answered.
struct RecentRequests {
    let capacity: Int
    private var known: Set<UInt64> = []
    /// The ids in the order they were admitted, oldest at ``oldest`` once full.
    private var order: [UInt64] = []
    private var oldest = 0

    init(capacity: Int = 65_536) {
        self.capacity = max(1, capacity)
        order.reserveCapacity(min(self.capacity, 4096))
    }

    /// Which of `requests` may be stored now, in order; the admitted ones are remembered.
    /// A request without an id (the daemon's own reports) follows nothing and is not remembered.
    mutating func admit(_ requests: [(id: UInt64?, follows: UInt64?)]) -> [Bool] {
        requests.map { request in
            if let follows = request.follows, !known.contains(follows) { return false }
            if let id = request.id { remember(id) }
            return true
        }
    }

    private mutating func remember(_ id: UInt64) {
        // A retry of a request admitted before keeps its first place.
        guard known.insert(id).inserted else { return }
        if order.count < capacity {
            order.append(id)
        } else {
            known.remove(order[oldest])
            order[oldest] = id
            oldest = (oldest + 1) % capacity
        }
    }
}
