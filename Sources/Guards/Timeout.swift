import Synchronization

/// Waiting for something that may never come: the first of an operation's result and a deadline.
///
/// Not a task group: a group waits for every child before it returns, and awaiting a task's
/// value ignores cancellation, so an operation that hangs (a fetch, a blocking read) would
/// hold its caller past the deadline.
public enum Timeout {
    /// `operation`'s result, or nil if `timeout` passes first or the caller is cancelled.
    ///
    /// The operation runs in a task of its own that is cancelled once this returns; it is not
    /// waited for, so one that ignores cancellation runs on, unobserved, and what it returns
    /// is dropped. An error it throws is rethrown if it comes before the deadline.
    public static func result<T: Sendable, Failure: Error>(
        within timeout: Duration, of operation: @escaping @Sendable () async throws(Failure) -> T
    ) async throws(Failure) -> T? {
        try await result(until: .now + timeout, of: operation)
    }

    /// `operation`'s result, or nil if `deadline` passes first or the caller is cancelled; see
    /// ``result(within:of:)``.
    public static func result<T: Sendable, Failure: Error>(
        until deadline: ContinuousClock.Instant, of operation: @escaping @Sendable () async throws(Failure) -> T
    ) async throws(Failure) -> T? {
        let first = FirstOutcome<Result<T, Failure>>()
        let work = Task {
            do throws(Failure) {
                first.give(.success(try await operation()))
            } catch {
                first.give(.failure(error))
            }
        }
        let timer = Task {
            try? await Task.sleep(until: deadline)
            first.give(nil)
        }
        defer {
            work.cancel()
            timer.cancel()
        }
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in first.wait(continuation) }
        } onCancel: {
            first.give(nil)
        }
        return try outcome?.get()
    }
}
