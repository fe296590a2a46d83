import Guards

/// The bus client's retries and deadlines, as a value: when an unanswered publish is sent again
/// or given up, when a ping is given up, when a subscription's bus counts as gone, and when a
/// catch-up read may be sent (again).
///
/// No clock, no sockets: every input names the instant it happened at, and what is due comes
/// back as ``Action``s for ``ClientWorker`` to perform. The worker keeps what it performs them
/// with (sockets, continuations, channels) and tells the timers of each request and
/// subscription it starts and ends, so that both know the same ones.
///
/// The schedule:
/// - A publish is sent again `firstRetry` after it was sent, then after twice as long each
///   time, at most `maxRetry` apart, until its deadline; then it fails, once.
/// - A ping fails at its deadline.
/// - A subscription whose bus has been silent for ``missedHeartbeats`` heartbeat intervals is
///   disconnected, once; hearing the bus again connects it.
/// - A catch-up read unanswered after `readTimeout` may be sent again; one that could not be
///   sent may be tried again after ``readRetryInterval``. Its reply, should it come after all,
///   still answers it (``read(answeredBy:)``): a bus slower than the timeout is slow, and a
///   client that took only the newest read's reply would never get on past it.
///
/// Call ``advance(to:)`` after every wake-up and sleep no longer than ``nextWake(after:)``.
struct ClientTimers {
    /// What is due; the worker performs each in order.
    enum Action: Equatable, Sendable {
        /// Send publish `requestID` again, with the same request id and envelopes (the daemon
        /// recognises what it already committed).
        case resendPublish(UInt64)
        /// Publish `requestID` was not answered before its deadline: fail it. It is forgotten.
        case failPublish(UInt64)
        /// Ping `requestID` was not answered before its deadline: fail it. It is forgotten.
        case failPing(UInt64)
        /// The subscription's catch-up read was not answered within `readTimeout`: it is no
        /// longer in flight, so a new one may be sent (its reply, if it comes, still counts).
        case readTimedOut(subscription: Int)
        /// The subscription's bus has been silent too long: tell its consumer it is disconnected.
        case disconnected(subscription: Int)
        /// The subscription's bus was heard while not known to be connected: tell its consumer.
        case connected(subscription: Int)
    }

    /// How many reads that timed out a subscription remembers, the newest kept: replies later
    /// than this many read timeouts are stale. Generous, since a bus that slow answers the
    /// reads in the order asked, the oldest first; a kilobyte a subscription.
    static let lateReadsKept = 64
    /// How soon a read that could not be sent is tried again.
    static let readRetryInterval: Duration = .milliseconds(100)
    /// How many heartbeat intervals of silence disconnect a subscription.
    static let missedHeartbeats = 3
    /// The heartbeat interval assumed until the bus names its own.
    static let defaultHeartbeatInterval: Duration = .milliseconds(500)
    /// The longest the worker sleeps, even with nothing due.
    static let longestSleep: Duration = .seconds(1)

    let firstRetry: Duration
    let maxRetry: Duration
    let readTimeout: Duration
    /// When an unanswered publish is sent again: after `firstRetry`, then doubling up to
    /// `maxRetry` (the shared ``Backoff``), without jitter (a request is one producer's, not a herd's).
    let retry: Backoff

    private struct Publish {
        let deadline: ContinuousClock.Instant
        /// Sends so far, the first included.
        var sends: Int
        var nextAttempt: ContinuousClock.Instant
    }

    private struct Subscription {
        var lastHeard: ContinuousClock.Instant
        var heartbeatInterval = ClientTimers.defaultHeartbeatInterval
        /// nil until the bus is first heard or found silent.
        var connected: Bool?
        var readInFlight: (requestID: UInt64, after: UInt64, sentAt: ContinuousClock.Instant)?
        /// Reads that timed out, oldest first, at most ``lateReadsKept``: by request id, the
        /// position each asked after.
        var lateReads: [(requestID: UInt64, after: UInt64)] = []
        /// A read could not be sent: not before this instant again.
        var readRetryAt: ContinuousClock.Instant?

        var silenceDeadline: ContinuousClock.Instant { lastHeard + heartbeatInterval * ClientTimers.missedHeartbeats }
    }

    private var publishes: [UInt64: Publish] = [:]
    private var pings: [UInt64: ContinuousClock.Instant] = [:]
    private var subscriptions: [Int: Subscription] = [:]

    init(firstRetry: Duration, maxRetry: Duration, readTimeout: Duration) {
        self.firstRetry = firstRetry
        self.maxRetry = maxRetry
        self.readTimeout = readTimeout
        retry = Backoff(initial: firstRetry, multiplier: 2, maximum: maxRetry, jitter: 0)
    }

    // MARK: Publishes and pings

    /// Publish `requestID` was sent at `now`; it fails at `deadline` unless answered.
    mutating func publishSent(_ requestID: UInt64, deadline: ContinuousClock.Instant, now: ContinuousClock.Instant) {
        // The first retry waits firstRetry, even past the cap; the next ones follow the backoff.
        publishes[requestID] = Publish(deadline: deadline, sends: 1, nextAttempt: now + firstRetry)
    }

    /// Publish `requestID` was answered or cancelled: nothing more is due for it.
    mutating func publishSettled(_ requestID: UInt64) {
        publishes.removeValue(forKey: requestID)
    }

    /// Ping `requestID` was sent; it fails at `deadline` unless answered.
    mutating func pingSent(_ requestID: UInt64, deadline: ContinuousClock.Instant) {
        pings[requestID] = deadline
    }

    /// Ping `requestID` was answered: nothing more is due for it.
    mutating func pingSettled(_ requestID: UInt64) {
        pings.removeValue(forKey: requestID)
    }

    // MARK: Subscriptions

    /// Subscription `id` started at `now`: its bus counts as heard then, neither connected nor
    /// disconnected yet.
    mutating func subscribed(_ id: Int, now: ContinuousClock.Instant) {
        subscriptions[id] = Subscription(lastHeard: now)
    }

    /// Subscription `id` ended: nothing more is due for it, and a reply to its read is nobody's.
    mutating func unsubscribed(_ id: Int) {
        subscriptions.removeValue(forKey: id)
    }

    /// The bus was heard for subscription `id` at `now`; `.connected` if that is news.
    mutating func heard(from id: Int, now: ContinuousClock.Instant) -> Action? {
        guard subscriptions[id] != nil else { return nil }
        subscriptions[id]?.lastHeard = now
        guard subscriptions[id]?.connected != true else { return nil }
        subscriptions[id]?.connected = true
        return .connected(subscription: id)
    }

    /// A heartbeat came for subscription `id` at `now`, saying the bus beats every `interval`
    /// (zero or less: the bus did not say, and the interval known so far stays); `.connected`
    /// if hearing the bus is news.
    mutating func heartbeat(for id: Int, interval: Duration, now: ContinuousClock.Instant) -> Action? {
        if interval > .zero { subscriptions[id]?.heartbeatInterval = interval }
        return heard(from: id, now: now)
    }

    /// Whether subscription `id` may send a catch-up read at `now`: none is in flight, and a
    /// read that could not be sent has waited ``readRetryInterval``.
    func mayRequestRead(for id: Int, now: ContinuousClock.Instant) -> Bool {
        guard let subscription = subscriptions[id] else { return false }
        return subscription.readInFlight == nil && subscription.readRetryAt.map { now >= $0 } ?? true
    }

    /// Subscription `id` sent catch-up read `requestID`, for the events after position `after`,
    /// at `now`; it may be sent again after `readTimeout` unless answered.
    mutating func readSent(for id: Int, requestID: UInt64, after: UInt64, now: ContinuousClock.Instant) {
        subscriptions[id]?.readInFlight = (requestID, after, now)
        subscriptions[id]?.readRetryAt = nil
    }

    /// Subscription `id` could not send a read at `now` (no daemon connected): not again for
    /// ``readRetryInterval``.
    mutating func readNotSent(for id: Int, now: ContinuousClock.Instant) {
        subscriptions[id]?.readRetryAt = now + Self.readRetryInterval
    }

    /// The subscription whose catch-up read `requestID` is, and the position it asked after: the
    /// read in flight, or one that timed out (`late`). A late read's reply is the worker's to
    /// take only while the subscription is still where the read asked from.
    func read(answeredBy requestID: UInt64) -> (subscription: Int, after: UInt64, late: Bool)? {
        for (id, subscription) in subscriptions {
            if let read = subscription.readInFlight, read.requestID == requestID { return (id, read.after, false) }
            if let read = subscription.lateReads.first(where: { $0.requestID == requestID }) {
                return (id, read.after, true)
            }
        }
        return nil
    }

    /// Subscription `id`'s read was answered with events at `now`: nothing is in flight and no
    /// late reply is awaited any more (what they would say is answered), and the bus was heard
    /// (`.connected` if that is news).
    mutating func readAnswered(for id: Int, now: ContinuousClock.Instant) -> Action? {
        subscriptions[id]?.readInFlight = nil
        subscriptions[id]?.lateReads = []
        return heard(from: id, now: now)
    }

    /// Subscription `id`'s read `requestID` was refused at `now`: the bus was heard
    /// (`.connected` if that is news), and the read is asked again after `readTimeout` rather
    /// than at once: the read in flight counts as sent `now`, or, with none, the next is not
    /// sent before then.
    mutating func readRefused(for id: Int, requestID: UInt64, now: ContinuousClock.Instant) -> Action? {
        let action = heard(from: id, now: now)
        guard var subscription = subscriptions[id] else { return action }
        subscription.lateReads.removeAll { $0.requestID == requestID }
        if let read = subscription.readInFlight {
            subscription.readInFlight = (read.requestID, read.after, now)
        } else {
            subscription.readRetryAt = now + readTimeout
        }
        subscriptions[id] = subscription
        return action
    }

    // MARK: Time

    /// What is due at `now`: publishes in order of request id, then pings, then subscriptions
    /// by id. Each failure and disconnection comes once.
    mutating func advance(to now: ContinuousClock.Instant) -> [Action] {
        var publishActions: [(UInt64, Action)] = []
        for index in publishes.indices {
            let (id, publish) = publishes[index]
            if now >= publish.deadline {
                publishActions.append((id, .failPublish(id)))
            } else if now >= publish.nextAttempt {
                let sends = publish.sends + 1
                publishes.values[index].sends = sends
                publishes.values[index].nextAttempt = now + retry.nominalDelay(attempt: sends)
                publishActions.append((id, .resendPublish(id)))
            }
        }
        for case (let id, .failPublish) in publishActions { publishes.removeValue(forKey: id) }

        var failedPings: [UInt64] = []
        for (id, deadline) in pings where now >= deadline { failedPings.append(id) }
        for id in failedPings { pings.removeValue(forKey: id) }

        var subscriptionActions: [(Int, [Action])] = []
        for index in subscriptions.indices {
            let (id, subscription) = subscriptions[index]
            var actions: [Action] = []
            if let read = subscription.readInFlight, now - read.sentAt >= readTimeout {
                subscriptions.values[index].readInFlight = nil
                subscriptions.values[index].lateReads.append((read.requestID, read.after))
                subscriptions.values[index].lateReads.removeFirst(
                    max(0, subscriptions.values[index].lateReads.count - Self.lateReadsKept))
                actions.append(.readTimedOut(subscription: id))
            }
            if subscription.connected != false, now >= subscription.silenceDeadline {
                subscriptions.values[index].connected = false
                actions.append(.disconnected(subscription: id))
            }
            if !actions.isEmpty { subscriptionActions.append((id, actions)) }
        }

        return publishActions.sorted { $0.0 < $1.0 }.map(\.1)
            + failedPings.sorted().map(Action.failPing)
            + subscriptionActions.sorted { $0.0 < $1.0 }.flatMap(\.1)
    }

    /// The instant by which the worker must call ``advance(to:)`` again: the earliest retry or
    /// deadline, and no later than ``longestSleep`` after `now`. Possibly at or before `now`
    /// (something is due already).
    ///
    /// A subscription known to be disconnected does not count its silence: that deadline lies
    /// in the past for good, and waking for it would spin.
    func nextWake(after now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        var next = now + Self.longestSleep
        for publish in publishes.values {
            next = min(next, publish.nextAttempt, publish.deadline)
        }
        for deadline in pings.values {
            next = min(next, deadline)
        }
        for subscription in subscriptions.values {
            if subscription.connected != false { next = min(next, subscription.silenceDeadline) }
            // A retry already due is the worker's to send once the channel has room; the
            // consumer making room wakes the worker, so waking for a past instant would spin.
            if let retry = subscription.readRetryAt, retry > now { next = min(next, retry) }
            if let read = subscription.readInFlight { next = min(next, read.sentAt + readTimeout) }
        }
        return next
    }
}
