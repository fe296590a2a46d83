import Synchronization

/// A count or position that only grows, and the tasks waiting for it to reach a mark.
///
/// What hosts and adapters report for tests and tools to await (inputs applied, outputs
/// acknowledged, outcomes published) without logs or polling.
public final class Watermark: Sendable {
    private struct State {
        var value: UInt64 = 0
        var waiters: [(mark: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    public init() {}

    public var value: UInt64 { state.withLock { $0.value } }

    /// Moves the value to `value` (never back) and wakes the waiters it reaches.
    public func advance(to value: UInt64) {
        update { $0 = max($0, value) }
    }

    /// Adds `count` to the value.
    public func add(_ count: Int) {
        update { $0 += UInt64(max(count, 0)) }
    }

    private func update(_ change: (inout UInt64) -> Void) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            change(&state.value)
            guard !state.waiters.isEmpty else { return [] }
            let current = state.value
            let ready = state.waiters.filter { $0.mark <= current }.map(\.continuation)
            state.waiters.removeAll { $0.mark <= current }
            return ready
        }
        for waiter in ready { waiter.resume() }
    }

    /// Returns once the value is at least `mark`.
    public func wait(until mark: UInt64) async {
        await withCheckedContinuation { continuation in
            let reached = state.withLock { state -> Bool in
                if state.value >= mark { return true }
                state.waiters.append((mark, continuation))
                return false
            }
            if reached { continuation.resume() }
        }
    }
}
