import BureauSchemas
import Guards
import Metrics
import Synchronization

/// What one consumer of the bus (a reducer host, an adapter, the front-end) has done: counted
/// as it happens with an atomic add, and handed to swift-metrics and to the bus's progress
/// reports by ``flush()`` about once a second, so that the path every event takes pays no
/// more than the add.
///
/// Its position is its subscription's (``EventSubscription/progress``): until the consumer
/// follows one, its progress is unknown and it reports nothing.
public final class ConsumerMetrics: Sendable {
    /// The consumer's name: the module it runs.
    public let consumer: String
    public let process: String
    private let applied = Atomic<UInt64>(0)
    private let malformed = Atomic<UInt64>(0)
    private let outputs = Atomic<UInt64>(0)
    private let state = Mutex(State())
    private let handles: Handles

    private struct State {
        var subscription: EventSubscription?
        var snapshotAt: ContinuousClock.Instant?
        /// What ``flush()`` last handed to the counters.
        var flushed: (applied: UInt64, malformed: UInt64, outputs: UInt64) = (0, 0, 0)
        var snapshotGauge: Gauge?
    }

    private struct Handles: Sendable {
        let applied: Counter
        let malformed: Counter
        let outputs: Counter
        let position: Gauge
        let live: Gauge
    }

    /// Metric names and what they mean: the metric reference (README, "Watching it run").
    public static let help: [String: String] = [
        "bureau_consumer_inputs_applied_total": "Inputs the consumer applied since its process started.",
        "bureau_consumer_inputs_malformed_total": "Inputs the consumer passed over because they did not decode.",
        "bureau_consumer_outputs_total": "Events the consumer published (outputs, outcomes) since its process started.",
        "bureau_consumer_position":
            "The consumer's position: every event at or before it is handled (as the consumer sees it).",
        "bureau_consumer_live": "1 while the consumer follows the live stream, 0 while it catches up from the log.",
        "bureau_consumer_snapshot_age_seconds": "Seconds since the consumer's last snapshot (absent before the first).",
    ]

    private let factory: any MetricsFactory
    private let dimensions: [(String, String)]

    /// - Parameter factory: where its metrics go; swift-metrics' bootstrapped factory unless a
    ///   test gives its own.
    public init(consumer: String, process: String, factory: any MetricsFactory = MetricsSystem.factory) {
        self.consumer = consumer
        self.process = process
        self.factory = factory
        let dimensions = [("module", consumer), ("process", process)]
        self.dimensions = dimensions
        handles = Handles(
            applied: Counter(label: "bureau_consumer_inputs_applied_total", dimensions: dimensions, factory: factory),
            malformed: Counter(
                label: "bureau_consumer_inputs_malformed_total", dimensions: dimensions, factory: factory),
            outputs: Counter(label: "bureau_consumer_outputs_total", dimensions: dimensions, factory: factory),
            position: Gauge(label: "bureau_consumer_position", dimensions: dimensions, factory: factory),
            live: Gauge(label: "bureau_consumer_live", dimensions: dimensions, factory: factory))
    }

    /// The subscription whose progress is the consumer's.
    public func follow(_ subscription: EventSubscription) {
        state.withLock { $0.subscription = subscription }
    }

    /// An input was applied.
    public func inputApplied() {
        applied.add(1, ordering: .relaxed)
    }

    /// An input was passed over: it did not decode.
    public func inputMalformed() {
        malformed.add(1, ordering: .relaxed)
    }

    /// `count` events were published (or handed to the outbox that publishes them).
    public func published(_ count: Int) {
        guard count > 0 else { return }
        outputs.add(UInt64(count), ordering: .relaxed)
    }

    /// A snapshot was saved now.
    public func snapshotted() {
        state.withLock { $0.snapshotAt = .now }
    }

    /// Inputs applied, passed over as malformed, and outputs published, so far.
    public var counts: (applied: UInt64, malformed: UInt64, outputs: UInt64) {
        (
            applied.load(ordering: .relaxed), malformed.load(ordering: .relaxed),
            outputs.load(ordering: .relaxed)
        )
    }

    /// Hands what was counted since the last call to the metrics, sets the gauges, and returns
    /// the progress to report to the bus: nil while the consumer follows no subscription (its
    /// progress is unknown, which is not 0).
    @discardableResult
    public func flush(pid: Int32 = 0, now: ContinuousClock.Instant = .now) -> Bureau_Bus_ConsumerProgress? {
        let counts = self.counts
        let (subscription, flushed, snapshotAt, snapshotGauge) = state.withLock { state in
            defer { state.flushed = counts }
            if state.snapshotAt != nil, state.snapshotGauge == nil {
                state.snapshotGauge = Gauge(
                    label: "bureau_consumer_snapshot_age_seconds", dimensions: dimensions, factory: factory)
            }
            return (state.subscription, state.flushed, state.snapshotAt, state.snapshotGauge)
        }
        if counts.applied > flushed.applied { handles.applied.increment(by: counts.applied - flushed.applied) }
        if counts.malformed > flushed.malformed {
            handles.malformed.increment(by: counts.malformed - flushed.malformed)
        }
        if counts.outputs > flushed.outputs { handles.outputs.increment(by: counts.outputs - flushed.outputs) }
        var progress = Bureau_Bus_ConsumerProgress()
        progress.consumer = consumer
        progress.process = process
        progress.pid = UInt32(bitPattern: pid)
        progress.inputsApplied = counts.applied
        progress.inputsMalformed = counts.malformed
        progress.outputs = counts.outputs
        if let snapshotAt {
            let age = now - snapshotAt
            snapshotGauge?.record(age.inSeconds)
            progress.snapshotKnown = true
            progress.snapshotAgeMs = UInt64(max(0, age.inMilliseconds))
        }
        guard let subscription else { return nil }
        let (position, live) = subscription.progress
        handles.position.record(Double(position))
        handles.live.record(live ? 1 : 0)
        progress.position = position
        progress.live = live
        return progress
    }

    /// The report that tells the bus this consumer is stopping cleanly.
    public func leaving(pid: Int32 = 0) -> Bureau_Bus_ConsumerProgress {
        var progress = flush(pid: pid) ?? Bureau_Bus_ConsumerProgress()
        progress.consumer = consumer
        progress.process = process
        progress.leaving = true
        return progress
    }
}
