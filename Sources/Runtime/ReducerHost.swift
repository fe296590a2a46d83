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

    /// What one run of the host has come to: the state and how far it has read.
    private struct Progress {
        var state: R.State
        /// The last input applied.
        var applied: UInt64
        /// Every event the subscription has passed, up to here, is accounted for: inputs applied,
        /// own outputs seen. Snapshots record this, not the last input: after a restart, own
        /// outputs published behind the last input need not be read again.
        var seen: UInt64
        var catchingUp = true
        /// Outputs computed while catching up, until the log shows which it holds.
        var held = HeldOutputs()
        var schedule: SnapshotSchedule
    }

    private func consume(outbox: Outbox) async throws {
        let (state, applied) = try await loadSnapshot()
        logger.info("starting", metadata: ["host.from_position": "\(applied)"])
        statistics?.started(from: applied)
        var progress = Progress(
            state: state, applied: applied, seen: applied,
            schedule: SnapshotSchedule(every: options.snapshotEvery, retry: options.snapshotRetry))

        let subscription = client.subscribe(reducer.subscriptionFilter, after: applied)
        metrics?.follow(subscription)
        // Graceful shutdown ends the subscription, which ends the loop after what is buffered.
        // (Not cancelOnGracefulShutdown(): it races every element in a task group of its own.)
        try await withGracefulShutdownHandler {
            for try await item in subscription {
                switch item {
                case .event(let event):
                    try await apply(event, to: &progress, outbox: outbox)
                case .caughtUp(let head):
                    try await caughtUp(at: head, with: &progress, outbox: outbox)
                case .connection(let connected):
                    logger.log(level: connected ? .info : .warning, connected ? "the bus is back" : "the bus is silent")
                }
            }
        } onGracefulShutdown: {
            subscription.cancel()
        }
        // Graceful shutdown: everything applied is published, then remembered. A cancelled
        // task (its process is going down hard) writes nothing more.
        if !progress.catchingUp && !Task.isCancelled { try await saveSnapshot(of: &progress, outbox: outbox) }
        logger.info("stopped", metadata: ["host.applied": "\(progress.applied)"])
    }

    /// The newest usable snapshot's state and position, or the initial state at 0.
    ///
    /// On a thread of its own, as every save is: a store's load and save block (a file's
    /// fsync, a database that is away until its timeouts), and the cooperative pool has two
    /// threads on a two-core machine.
    private func loadSnapshot() async throws -> (R.State, UInt64) {
        let (logger, snapshots, module, version) = (logger, snapshots, reducer.module, reducer.stateVersion)
        let snapshot = try await OwnThread.run(name: "bureau-snapshot") {
            snapshots.load(
                R.State.self, module: module, stateVersion: version,
                rejected: {
                    logger.warning(
                        "ignoring a snapshot; rebuilding from the log", metadata: ["host.snapshot_problem": "\($0)"])
                })
        }
        return snapshot.map { ($0.state, $0.position) } ?? (reducer.initialState, 0)
    }

    /// One event of the subscription: an own output seen, or an input stepped, its outputs held
    /// (catching up) or published (live).
    private func apply(_ event: StoredEvent, to progress: inout Progress, outbox: Outbox) async throws {
        progress.seen = event.position
        statistics?.saw(event.position)
        if reducer.isOwnOutput(event) {
            if progress.catchingUp { progress.held.markPublished(event.id) }
            return
        }
        let began = progress.catchingUp ? nil : Self.tracedStepBegins(for: event)
        let step = reducer.step(event, state: &progress.state)
        switch step {
        case .notAnInput: return
        case .applied: metrics?.inputApplied()
        case .malformed(_, let reason):
            metrics?.inputMalformed()
            // An input that does not decode is passed over, and said so, once.
            logger.error(
                "passing over an input", metadata: ["host.position": "\(event.position)", "host.error": "\(reason)"])
        }
        var outputs = step.outputs
        progress.applied = event.position
        statistics?.applied(event.position)
        guard !progress.catchingUp else {
            progress.held.hold(outputs)
            return
        }
        let span = began.flatMap {
            Self.stepSpan(for: event, module: reducer.module, began: $0, step: step.kind, outputs: &outputs)
        }
        try await outbox.enqueue(outputs)
        metrics?.published(outputs.count)
        span?.end()
        progress.schedule.applied()
        if progress.schedule.isDue(at: .now) { try await saveSnapshot(of: &progress, outbox: outbox) }
    }

    /// The subscription reached the head for the first time: the held outputs the log does not
    /// hold are published, and the state remembered.
    private func caughtUp(at head: UInt64, with progress: inout Progress, outbox: Outbox) async throws {
        progress.seen = max(progress.seen, head)
        guard progress.catchingUp else { return }
        progress.catchingUp = false
        let missing = progress.held.missing
        logger.info(
            "caught up",
            metadata: [
                "host.head": "\(head)", "host.applied": "\(progress.applied)", "host.republished": "\(missing.count)",
            ])
        try await outbox.enqueue(missing)
        metrics?.published(missing.count)
        progress.held = HeldOutputs()
        try await saveSnapshot(of: &progress, outbox: outbox)
        statistics?.caughtUp(head: head, republished: missing.count)
    }

    /// Saves the state once every output so far is acknowledged; a save that fails is logged
    /// and tried again later (``SnapshotSchedule``), never fatal.
    private func saveSnapshot(of progress: inout Progress, outbox: Outbox) async throws {
        try await outbox.drain()
        let seen = progress.seen
        let snapshot = Snapshot(
            module: reducer.module, stateVersion: reducer.stateVersion, position: seen, state: progress.state)
        let snapshots = self.snapshots
        do {
            // Off the pool, as the load is (``loadSnapshot()``).
            try await OwnThread.run(name: "bureau-snapshot") { try snapshots.save(snapshot) }
        } catch {
            let delay = progress.schedule.failed(at: .now)
            statistics?.snapshotFailed()
            logger.error(
                "could not save the snapshot; going on, and trying again later",
                metadata: [
                    "host.position": "\(seen)", "host.error": "\(error)",
                    "host.attempt": "\(progress.schedule.failedSaves)", "host.retry_in_ms": "\(delay.inMilliseconds)",
                ])
            return
        }
        let failedBefore = progress.schedule.saved()
        if failedBefore > 0 {
            logger.notice(
                "the snapshot is saved again", metadata: ["host.position": "\(seen)", "host.failed": "\(failedBefore)"])
        }
        statistics?.snapshotted(at: seen)
        metrics?.snapshotted()
    }
}
