import BureauSchemas
import Bus
import EventLog
import Guards
import Logging
import ServiceLifecycle

/// Runs one reducer against the bus with exactly-once effect across crashes.
///
/// On start it loads the newest usable snapshot (state, last input position), subscribes to
/// its inputs and its own past outputs from that position, and re-applies every input since.
/// Outputs computed while catching up are held back: an output already in the log (same
/// derived id) is dropped, and when the subscription reaches the head the rest are published.
/// Then it follows live, publishing through an ``Outbox``. A snapshot is written only when
/// every output of the inputs it covers is acknowledged, so killing the host at any instant
/// loses no output and duplicates none (a publish still in flight when the host died is
/// recognised by the bus's duplicate window).
///
/// A snapshot only shortens the next start, so a save that fails (the store is failing over,
/// the disk is full) is logged and tried again, not fatal: the host goes on answering, and the
/// next save is tried at the first input after a backoff (``ReducerHostOptions/snapshotRetry``),
/// after catching up and at shutdown.
public final class ReducerHost<R: Reducer>: Service {
    private let reducer: R
    private let client: any EventBus
    private let snapshots: any SnapshotStore
    private let options: ReducerHostOptions
    private let logger: Logger
    private let statistics: HostStatistics?
    private let metrics: ConsumerMetrics?

    /// - Parameter metrics: what it counts for swift-metrics and the bus's progress reports.
    public init(
        reducer: R, client: any EventBus, snapshots: any SnapshotStore,
        options: ReducerHostOptions = ReducerHostOptions(),
        logger: Logger,
        statistics: HostStatistics? = nil,
        metrics: ConsumerMetrics? = nil
    ) {
        self.metrics = metrics
        self.reducer = reducer
        self.client = client
        self.snapshots = snapshots
        self.options = options
        var logger = logger
        logger[metadataKey: "host.module"] = "\(reducer.module)"
        self.logger = logger
        self.statistics = statistics
    }

    public func run() async throws {
        let statistics = self.statistics
        let outbox = Outbox(client: client) { statistics?.acknowledged($0) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await outbox.run() }
            group.addTask { try await self.consume(outbox: outbox) }
            // The consumer ends on graceful shutdown, after a final snapshot; then stop publishing.
            try await group.next()
            group.cancelAll()
        }
    }

    private func consume(outbox: Outbox) async throws {
        let logger = self.logger
        var state = reducer.initialState
        var applied: UInt64 = 0
        if let snapshot = snapshots.load(
            R.State.self, module: reducer.module, stateVersion: reducer.stateVersion,
            rejected: {
                logger.warning(
                    "ignoring a snapshot; rebuilding from the log", metadata: ["host.snapshot_problem": "\($0)"])
            })
        {
            state = snapshot.state
            applied = snapshot.position
        }
        logger.info("starting", metadata: ["host.from_position": "\(applied)"])
        statistics?.started(from: applied)

        // Every event the subscription has passed, up to here, is accounted for: inputs applied,
        // own outputs seen. Snapshots record this, not the last input: after a restart, own
        // outputs published behind the last input need not be read again.
        var seen = applied
        var catchingUp = true
        var held = HeldOutputs()
        var sinceSnapshot = 0
        // Saves that failed in a row, and when the next may be tried.
        var failedSaves = 0
        var retrySaveAt: ContinuousClock.Instant?

        func saveSnapshot() async throws {
            try await outbox.drain()
            do {
                try snapshots.save(
                    Snapshot(module: reducer.module, stateVersion: reducer.stateVersion, position: seen, state: state))
            } catch {
                failedSaves += 1
                let delay = options.snapshotRetry.delay(attempt: failedSaves)
                retrySaveAt = .now + delay
                statistics?.snapshotFailed()
                logger.error(
                    "could not save the snapshot; going on, and trying again later",
                    metadata: [
                        "host.position": "\(seen)", "host.error": "\(error)", "host.attempt": "\(failedSaves)",
                        "host.retry_in_ms": "\(delay.inMilliseconds)",
                    ])
                return
            }
            if failedSaves > 0 {
                logger.notice(
                    "the snapshot is saved again",
                    metadata: ["host.position": "\(seen)", "host.failed": "\(failedSaves)"])
            }
            failedSaves = 0
            retrySaveAt = nil
            sinceSnapshot = 0
            statistics?.snapshotted(at: seen)
            metrics?.snapshotted()
        }

        let subscription = client.subscribe(reducer.subscriptionFilter, after: applied)
        metrics?.follow(subscription)
        // Graceful shutdown ends the subscription, which ends the loop after what is buffered.
        // (Not cancelOnGracefulShutdown(): it races every element in a task group of its own.)
        try await withGracefulShutdownHandler {
            for try await item in subscription {
                switch item {
                case .event(let event):
                    seen = event.position
                    statistics?.saw(event.position)
                    if reducer.isOwnOutput(event) {
                        if catchingUp { held.markPublished(event.id) }
                        continue
                    }
                    let began = catchingUp ? nil : Self.tracedStepBegins(for: event)
                    let step = reducer.step(event, state: &state)
                    switch step {
                    case .notAnInput: continue
                    case .applied: metrics?.inputApplied()
                    case .malformed(_, let reason):
                        metrics?.inputMalformed()
                        // An input that does not decode is passed over, and said so, once.
                        logger.error(
                            "passing over an input",
                            metadata: ["host.position": "\(event.position)", "host.error": "\(reason)"])
                    }
                    var outputs = step.outputs
                    applied = event.position
                    statistics?.applied(event.position)
                    if catchingUp {
                        held.hold(outputs)
                    } else {
                        let span = began.flatMap {
                            Self.stepSpan(
                                for: event, module: reducer.module, began: $0, step: step.kind, outputs: &outputs)
                        }
                        try await outbox.enqueue(outputs)
                        metrics?.published(outputs.count)
                        span?.end()
                        sinceSnapshot += 1
                        if sinceSnapshot >= options.snapshotEvery, retrySaveAt.map({ $0 <= .now }) ?? true {
                            try await saveSnapshot()
                        }
                    }
                case .caughtUp(let head):
                    seen = max(seen, head)
                    guard catchingUp else { continue }
                    catchingUp = false
                    let missing = held.missing
                    logger.info(
                        "caught up",
                        metadata: [
                            "host.head": "\(head)", "host.applied": "\(applied)",
                            "host.republished": "\(missing.count)",
                        ])
                    try await outbox.enqueue(missing)
                    metrics?.published(missing.count)
                    held = HeldOutputs()
                    try await saveSnapshot()
                    statistics?.caughtUp(head: head, republished: missing.count)
                case .connection(let connected):
                    logger.log(level: connected ? .info : .warning, connected ? "the bus is back" : "the bus is silent")
                }
            }
        } onGracefulShutdown: {
            subscription.cancel()
        }
        // Graceful shutdown: everything applied is published, then remembered. A cancelled
        // task (its process is going down hard) writes nothing more.
        if !catchingUp && !Task.isCancelled { try await saveSnapshot() }
        logger.info("stopped", metadata: ["host.applied": "\(applied)"])
    }
}
