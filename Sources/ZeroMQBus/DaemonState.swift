import Bus
import Synchronization

/// What the daemon's two loop threads and its owner share.
final class DaemonState: Sendable {
    /// The last position committed and handed to the live stream (stored just before its
    /// batch is sent): the catch-up server reads no further, and a read after it is
    /// `ahead-of-log`.
    let publishedHead: Atomic<UInt64>
    /// Commits made (one fdatasync each with `always`, covering one or more written batches) and
    /// the events they held.
    let committedBatches = Atomic<Int>(0)
    let committedEvents = Atomic<Int>(0)
    let epoch: UInt64
    let pid: Int32
    let version: String
    let startedAt = ContinuousClock.now
    /// The daemon's metrics (swift-metrics handles), shared by its threads.
    let metrics: BusMetrics
    /// What `stats` answers with, beyond the counters (``DaemonFigures``).
    let figures = Mutex(DaemonFigures())
    private let completion = Mutex<Completion>(Completion())

    private struct Completion {
        var finished = false
        var error: (any Error)?
        var waiters: [CheckedContinuation<Void, any Error>] = []
    }

    init(head: UInt64, epoch: UInt64, pid: Int32, version: String, metrics: BusMetrics) {
        publishedHead = Atomic(head)
        self.metrics = metrics
        self.epoch = epoch
        self.pid = pid
        self.version = version
    }

    /// Records that the daemon stopped, with the error that stopped it if any, and wakes waiters.
    func finish(error: (any Error)?) {
        let waiters = completion.withLock { state -> [CheckedContinuation<Void, any Error>] in
            guard !state.finished else { return [] }
            state.finished = true
            state.error = error
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters {
            if let error { waiter.resume(throwing: error) } else { waiter.resume() }
        }
    }

    var isFinished: Bool { completion.withLock { $0.finished } }

    /// Returns when the daemon has stopped; throws the error that stopped it.
    func waitUntilFinished() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome = completion.withLock { state -> Result<Void, any Error>? in
                guard state.finished else {
                    state.waiters.append(continuation)
                    return nil
                }
                return state.error.map { .failure($0) } ?? .success(())
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }
}
