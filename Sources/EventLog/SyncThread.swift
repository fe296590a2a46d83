import Foundation

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
        let thread = Thread { [self] in
            // Named for `top -H` and the benchmarks' CPU per thread (15 characters at most).
            Thread.current.name = "bureau-sync"
            run()
        }
        thread.start()
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
