import Synchronization

/// The first of several outcomes (nil for "none in time"), handed to one waiter; later ones are dropped.
final class FirstOutcome<Value: Sendable>: Sendable {
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
