import Synchronization

/// What a reducer host has done, for tests and benchmarks to observe without logs.
public final class HostStatistics: Sendable {
    private struct Values {
        var startedFrom: UInt64 = 0
        var caughtUpHead: UInt64?
        var republished = 0
        var snapshots = 0
        var failedSnapshots = 0
        var lastSnapshot: UInt64 = 0
    }

    private let values = Mutex(Values())
    /// The position of the last input applied.
    private let appliedMark = Watermark()
    /// The position the host's subscription has passed, its own outputs included.
    private let seenMark = Watermark()
    /// Outputs the bus has acknowledged since the host started.
    private let acknowledgedMark = Watermark()
    /// 1 once the host has caught up with the log after starting.
    private let caughtUpMark = Watermark()

    public init() {}

    public var startedFrom: UInt64 { values.withLock { $0.startedFrom } }
    public var applied: UInt64 { appliedMark.value }
    public var republished: Int { values.withLock { $0.republished } }
    public var snapshots: Int { values.withLock { $0.snapshots } }
    /// Snapshot saves that failed (each logged; the host went on).
    public var failedSnapshots: Int { values.withLock { $0.failedSnapshots } }

    func started(from position: UInt64) {
        values.withLock { $0.startedFrom = position }
    }

    func applied(_ position: UInt64) {
        appliedMark.advance(to: position)
    }

    /// The host (or an adapter hosted alike) has caught up with the log up to `head`: it is ready.
    public func caughtUp(head: UInt64, republished: Int = 0) {
        values.withLock { values in
            values.caughtUpHead = head
            values.republished += republished
        }
        caughtUpMark.advance(to: 1)
    }

    /// The host has passed every event up to `position`.
    func saw(_ position: UInt64) {
        seenMark.advance(to: position)
    }

    /// Returns once the host's subscription has passed `position` (its own outputs included).
    public func waitUntilSeen(_ position: UInt64) async {
        await seenMark.wait(until: position)
    }

    /// Outputs the bus has acknowledged since the host started.
    public var acknowledged: Int { Int(acknowledgedMark.value) }

    func acknowledged(_ count: Int) {
        acknowledgedMark.add(count)
    }

    /// Returns once the bus has acknowledged at least `count` outputs of the host.
    public func waitUntilAcknowledged(_ count: Int) async {
        await acknowledgedMark.wait(until: UInt64(max(count, 0)))
    }

    func snapshotFailed() {
        values.withLock { $0.failedSnapshots += 1 }
    }

    func snapshotted(at position: UInt64) {
        values.withLock {
            $0.snapshots += 1
            $0.lastSnapshot = position
        }
    }

    /// Returns once the host has applied an input at or after `position`.
    public func waitUntilApplied(_ position: UInt64) async {
        await appliedMark.wait(until: position)
    }

    /// Returns once the host has caught up with the log after starting.
    public func waitUntilCaughtUp() async {
        await caughtUpMark.wait(until: 1)
    }
}
