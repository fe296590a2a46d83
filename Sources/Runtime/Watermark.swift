import Synchronization

/// A count or position that only grows, and the tasks waiting for it to reach a mark.
///
/// What hosts and adapters report for tests and tools to await (inputs applied, outputs
/// acknowledged, outcomes published) without logs or polling. A host moves it for every
/// event, so moving it is an atomic operation; the lock is taken only when someone waits.
public final class Watermark: Sendable {
    private let current = Atomic<UInt64>(0)
    /// How many tasks wait; changed only under `waiters`' lock.
    private let waiting = Atomic<Int>(0)
    private let waiters = Mutex<[(mark: UInt64, continuation: CheckedContinuation<Void, Never>)]>([])

    public init() {}

    public var value: UInt64 { current.load(ordering: .sequentiallyConsistent) }

    /// Moves the value to `value` (never back) and wakes the waiters it reaches.
    public func advance(to value: UInt64) {
        var seen = current.load(ordering: .relaxed)
        while seen < value {
            let (exchanged, original) = current.compareExchange(
                expected: seen, desired: value, ordering: .sequentiallyConsistent)
            if exchanged { break }
            seen = original
        }
        wakeIfWaited()
    }

    /// Adds `count` to the value.
    public func add(_ count: Int) {
        current.wrappingAdd(UInt64(max(count, 0)), ordering: .sequentiallyConsistent)
        wakeIfWaited()
    }

    /// A waiter counts itself before it reads the value, and an update writes the value before
    /// it reads the count (both sequentially consistent): so either the waiter sees the new
    /// value, or the update sees the waiter and wakes it under the lock the waiter held while
    /// it queued itself.
    private func wakeIfWaited() {
        guard waiting.load(ordering: .sequentiallyConsistent) > 0 else { return }
        let ready = waiters.withLock { waiters -> [CheckedContinuation<Void, Never>] in
            let value = current.load(ordering: .sequentiallyConsistent)
            let ready = waiters.filter { $0.mark <= value }.map(\.continuation)
            waiters.removeAll { $0.mark <= value }
            waiting.subtract(ready.count, ordering: .sequentiallyConsistent)
            return ready
        }
        for waiter in ready { waiter.resume() }
    }

    /// Returns once the value is at least `mark`.
    public func wait(until mark: UInt64) async {
        if value >= mark { return }
        await withCheckedContinuation { continuation in
            let reached = waiters.withLock { waiters -> Bool in
                waiting.add(1, ordering: .sequentiallyConsistent)
                if current.load(ordering: .sequentiallyConsistent) >= mark {
                    waiting.subtract(1, ordering: .sequentiallyConsistent)
                    return true
                }
                waiters.append((mark, continuation))
                return false
            }
            if reached { continuation.resume() }
        }
    }
}
