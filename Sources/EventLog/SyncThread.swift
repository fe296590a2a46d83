import Foundation
import Guards

/// A thread of the log's own that runs its `fdatasync`s one after another, so that the writer
/// goes on framing and writing the next batch while the disk makes the last one durable (the
/// log flusher of Kafka, the journaller of the LMAX disruptor).
///
/// Started by the first job; ``stop()`` ends it after the jobs it holds.
final class SyncThread: @unchecked Sendable {
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [() -> Void] = []
    private var stopping = false
    private var started = false

    /// Runs `job` on the thread, after the jobs before it; once stopped, runs it here and now.
    func submit(_ job: @escaping () -> Void) {
        condition.lock()
        if stopping {
            condition.unlock()
            job()
            return
        }
        jobs.append(job)
        let start = !started
        started = true
        condition.signal()
        condition.unlock()
        guard start else { return }
        do {
            // Named for `top -H` and the benchmarks' CPU per thread (15 characters at most).
            try OwnThread.detached(name: "bureau-sync") { [self] in run() }
        } catch {
            // No thread to be had: the jobs run here, in order, as they do once stopped.
            condition.lock()
            stopping = true
            let held = jobs
            jobs = []
            condition.unlock()
            held.forEach { $0() }
        }
    }

    /// Ends the thread once the jobs it holds have run; does not wait for them.
    func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }
}
