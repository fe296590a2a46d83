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

/// The first of several outcomes (nil for "none in time"), handed to one waiter; later ones are dropped.
private final class FirstOutcome<Value: Sendable>: Sendable {
    private enum State {
        case waiting(CheckedContinuation<Value?, Never>?)
        case given(Value?)
        case done
    }

    private let state = Mutex<State>(.waiting(nil))

    /// Resumes `continuation` with the outcome, now if it is already given.
    func wait(_ continuation: CheckedContinuation<Value?, Never>) {
        let ready = state.withLock { state -> Value?? in
            guard case .given(let value) = state else {
                state = .waiting(continuation)
                return nil
            }
            state = .done
            return .some(value)
        }
        if let ready { continuation.resume(returning: ready) }
    }

    /// The outcome, if none was given before.
    func give(_ value: Value?) {
        let waiter = state.withLock { state -> CheckedContinuation<Value?, Never>? in
            guard case .waiting(let waiter) = state else { return nil }
            guard let waiter else {
                state = .given(value)
                return nil
            }
            state = .done
            return waiter
        }
        waiter?.resume(returning: value)
    }
}
