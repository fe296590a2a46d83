import Synchronization

/// Fires once: nil when the deployment is ready, or the reason it will not be.
final class ReadySignal: Sendable {
    private struct State {
        var outcome: (any Error)??
        var waiters: [CheckedContinuation<(any Error)?, Never>] = []
    }
    private let state = Mutex(State())

    func fire(_ failure: (any Error)?) {
        let waiters = state.withLock { state -> [CheckedContinuation<(any Error)?, Never>] in
            guard state.outcome == nil else { return [] }
            state.outcome = .some(failure)
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: failure) }
    }

    func wait() async -> (any Error)? {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> (any Error)?? in
                if let outcome = state.outcome { return outcome }
                state.waiters.append(continuation)
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }
}
