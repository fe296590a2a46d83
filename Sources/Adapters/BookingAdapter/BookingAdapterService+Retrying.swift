extension BookingAdapterService {
    /// What one attempt came to: done with a value, or to be tried again after the backoff.
    enum Attempt<Value> {
        case done(Value)
        case again
    }

    /// The adapter's one retry loop, for its calls, its resolving, its publishing and its
    /// undoing: runs `attempt` with 1, 2, 3, … until it is done, waiting the configuration's
    /// ``Backoff`` (`delay(attempt:)`, jittered, capped) after each `.again`. Each attempt
    /// decides for itself when the attempts are used up (``Configuration/maxAttempts``, or never,
    /// for resolving) and what giving up means. Returns the value it was done with; nil if the
    /// adapter is stopping (the task cancelled during a wait).
    func retrying<Value, Failure: Error>(
        _ attempt: (Int) async throws(Failure) -> Attempt<Value>
    ) async throws(Failure) -> Value? {
        var number = 0
        while true {
            number += 1
            if case .done(let value) = try await attempt(number) { return value }
            do {
                try await Task.sleep(for: configuration.backoff.delay(attempt: number))
            } catch {
                return nil
            }
        }
    }
}
