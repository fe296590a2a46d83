import Foundation
import Guards
import Testing

/// Runs a test on threads of its own instead of Swift's cooperative pool: for tests whose work
/// blocks (`fdatasync` after `fdatasync`, files written and read again, fault plans run call by
/// call). On two cores the pool has two threads; two such tests on it held both, and every
/// other test of the run, however trivial, waited seconds behind them.
///
/// The test stays the same task (its `#expect`s and `Issue.record`s count): a task executor
/// preference sends its jobs, and its child tasks', to two threads the tests with this trait
/// share.
public struct OwnThreads: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard testCase != nil else {
            try await function()
            return
        }
        guard let executor = BlockingWorkExecutor.shared else {
            // Not run on the pool instead: its blocking work would hold the pool's threads (two on
            // two cores) from every other test of the run.
            Issue.record("not run: the threads of the .ownThreads trait could not be started")
            return
        }
        try await withTaskExecutorPreference(executor) { try await function() }
    }
}

extension Trait where Self == OwnThreads {
    /// Runs each test on threads of its own, not on the cooperative pool (``OwnThreads``).
    public static var ownThreads: Self { OwnThreads() }
}

/// A task executor of two threads that run its jobs in turn, for the whole test run.
final class BlockingWorkExecutor: TaskExecutor, @unchecked Sendable {
    /// Nil if the threads could not be started: each test with the trait then fails, saying so.
    static let shared: BlockingWorkExecutor? = try? BlockingWorkExecutor(threads: 2)

    // Guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    private init(threads: Int) throws {
        for index in 0..<threads {
            try OwnThread.detached(name: "test-blocking-\(index)") { [self] in run() }
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
