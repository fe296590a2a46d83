import EventLog
import Guards
import Logging
import Synchronization

/// Saves the booking adapter's checkpoint (the position before which all its work is done),
/// and tries a save that failed again after a backoff, even if no further work finishes: a store
/// that was away (a PostgreSQL failover) gets the newest checkpoint once it is back. A checkpoint
/// only shortens the next start (work after it is found in the log again), so a failure is said,
/// never fatal.
final class CheckpointSaver: Sendable {
    private let snapshots: any SnapshotStore
    private let module: String
    private let backoff: Backoff
    private let logger: Logger
    /// The newest checkpoint whose save failed and that nothing newer has replaced; the newest saved.
    private let state = Mutex<(owed: UInt64?, saved: UInt64)>((nil, 0))
    private let failures: AsyncStream<Void>
    private let failed: AsyncStream<Void>.Continuation

    struct Checkpoint: Codable, Sendable {}

    init(snapshots: any SnapshotStore, module: String, backoff: Backoff, logger: Logger) {
        self.snapshots = snapshots
        self.module = module
        self.backoff = backoff
        self.logger = logger
        (failures, failed) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Where the last run left off (0 for none).
    func load() -> UInt64 {
        snapshots.load(
            Checkpoint.self, module: module, stateVersion: 1,
            rejected: { [logger] in
                logger.warning(
                    "ignoring the checkpoint; starting from the beginning of the log",
                    metadata: ["booking.checkpoint_problem": "\($0)"])
            })?.position ?? 0
    }

    /// Saves `checkpoint` unless a newer one is saved; true once it is (or was overtaken).
    ///
    /// Saves are made one at a time, the check and the save together: two works finishing at
    /// once must not leave the older checkpoint saved last. (The store's own call blocks its
    /// caller as long, under the store's own lock.)
    @discardableResult
    func save(_ checkpoint: UInt64) -> Bool {
        let failure = state.withLock { state -> (any Error)? in
            guard checkpoint > state.saved else { return nil }
            do {
                try snapshots.save(Snapshot(module: module, stateVersion: 1, position: checkpoint, state: Checkpoint()))
            } catch {
                state.owed = max(state.owed ?? 0, checkpoint)
                return error
            }
            state.saved = checkpoint
            if let owed = state.owed, owed <= checkpoint { state.owed = nil }
            return nil
        }
        guard let failure else { return true }
        logger.error(
            "could not save the checkpoint; trying again",
            metadata: ["booking.checkpoint": "\(checkpoint)", "booking.error": "\(failure)"])
        failed.yield()
        return false
    }

    /// Tries what is owed again, with the backoff, until it is saved or overtaken; waits for the
    /// next failure after. Returns when the task is cancelled.
    func retryOwed() async {
        for await _ in failures {
            var attempt = 0
            while let owed = state.withLock({ $0.owed }) {
                attempt += 1
                do {
                    try await Task.sleep(for: backoff.delay(attempt: attempt))
                } catch {
                    return
                }
                if save(owed) {
                    logger.notice(
                        "the checkpoint is saved again",
                        metadata: ["booking.checkpoint": "\(owed)", "booking.attempts": "\(attempt)"])
                }
            }
        }
    }

    /// Ends ``retryOwed()``, trying what is still owed once more: the adapter is stopping.
    func finish() {
        failed.finish()
        if let owed = state.withLock({ $0.owed }) { save(owed) }
    }
}
