import Synchronization

/// What a reducer host has done, for tests and benchmarks to observe without logs.
public final class HostStatistics: Sendable {
    private struct Values {
        var startedFrom: UInt64 = 0
        var applied: UInt64 = 0
        var caughtUpHead: UInt64?
        var republished = 0
        var snapshots = 0
        var lastSnapshot: UInt64 = 0
        var acknowledged = 0
        var acknowledgedWaiters: [(Int, CheckedContinuation<Void, Never>)] = []
        var waiters: [(UInt64, CheckedContinuation<Void, Never>)] = []
        var seen: UInt64 = 0
        var seenWaiters: [(UInt64, CheckedContinuation<Void, Never>)] = []
        var caughtUpWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let values = Mutex(Values())

    public init() {}

    public var startedFrom: UInt64 { values.withLock { $0.startedFrom } }
    public var applied: UInt64 { values.withLock { $0.applied } }
    public var republished: Int { values.withLock { $0.republished } }
    public var snapshots: Int { values.withLock { $0.snapshots } }

    func started(from position: UInt64) {
        values.withLock { $0.startedFrom = position }
    }

    func applied(_ position: UInt64) {
        let ready = values.withLock { values -> [CheckedContinuation<Void, Never>] in
            values.applied = position
            guard !values.waiters.isEmpty else { return [] }
            let ready = values.waiters.filter { $0.0 <= position }.map(\.1)
            values.waiters.removeAll { $0.0 <= position }
            return ready
        }
        for waiter in ready { waiter.resume() }
    }

    /// The host (or an adapter hosted alike) has caught up with the log up to `head`: it is ready.
    public func caughtUp(head: UInt64, republished: Int = 0) {
        let ready = values.withLock { values -> [CheckedContinuation<Void, Never>] in
            values.caughtUpHead = head
            values.republished += republished
            defer { values.caughtUpWaiters = [] }
            return values.caughtUpWaiters
        }
        for waiter in ready { waiter.resume() }
    }

    /// The host has passed every event up to `position`.
    func saw(_ position: UInt64) {
        let ready = values.withLock { values -> [CheckedContinuation<Void, Never>] in
            values.seen = position
            guard !values.seenWaiters.isEmpty else { return [] }
            let ready = values.seenWaiters.filter { $0.0 <= position }.map(\.1)
            values.seenWaiters.removeAll { $0.0 <= position }
            return ready
        }
        for waiter in ready { waiter.resume() }
    }

    /// Returns once the host's subscription has passed `position` (its own outputs included).
    public func waitUntilSeen(_ position: UInt64) async {
        await withCheckedContinuation { continuation in
            let now = values.withLock { values -> Bool in
                if values.seen >= position { return true }
                values.seenWaiters.append((position, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Outputs the bus has acknowledged since the host started.
    public var acknowledged: Int { values.withLock { $0.acknowledged } }

    func acknowledged(_ count: Int) {
        let ready = values.withLock { values -> [CheckedContinuation<Void, Never>] in
            values.acknowledged += count
            let total = values.acknowledged
            let ready = values.acknowledgedWaiters.filter { $0.0 <= total }.map(\.1)
            values.acknowledgedWaiters.removeAll { $0.0 <= total }
            return ready
        }
        for waiter in ready { waiter.resume() }
    }

    /// Returns once the bus has acknowledged at least `count` outputs of the host.
    public func waitUntilAcknowledged(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let now = values.withLock { values -> Bool in
                if values.acknowledged >= count { return true }
                values.acknowledgedWaiters.append((count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    func snapshotted(at position: UInt64) {
        values.withLock {
            $0.snapshots += 1
            $0.lastSnapshot = position
        }
    }

    /// Returns once the host has applied an input at or after `position`.
    public func waitUntilApplied(_ position: UInt64) async {
        await withCheckedContinuation { continuation in
            let now = values.withLock { values -> Bool in
                if values.applied >= position { return true }
                values.waiters.append((position, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Returns once the host has caught up with the log after starting.
    public func waitUntilCaughtUp() async {
        await withCheckedContinuation { continuation in
            let now = values.withLock { values -> Bool in
                if values.caughtUpHead != nil { return true }
                values.caughtUpWaiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}
