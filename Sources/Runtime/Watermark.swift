import Synchronization

/// A count or position that only grows, and the tasks waiting for it to reach a mark.
///
/// What hosts and adapters report for tests and tools to await (inputs applied, outputs
/// acknowledged, outcomes published) without logs or polling. A host moves it for every
/// event, so moving it is an atomic operation; the lock is taken only when someone waits.
public final class Watermark: Sendable {
    private let current = Atomic<UInt64>(0)
    /// The lowest mark a task waits for, `UInt64.max` when none waits; changed only under
    /// `waiters`' lock. An update that does not reach it takes no lock: a host moves the value
    /// for every event while a test or tool waits for a far mark.
    private let lowestMark = Atomic<UInt64>(.max)
    private let waiters = Mutex<[(mark: UInt64, continuation: CheckedContinuation<Void, Never>)]>([])

    public init() {}

    public var value: UInt64 { current.load(ordering: .sequentiallyConsistent) }

    /// How many tasks wait, for tests that must know a waiter has queued.
    var waiterCount: Int { waiters.withLock { $0.count } }

    /// Moves the value to `value` (never back) and wakes the waiters it reaches.
    public func advance(to value: UInt64) {
        var seen = current.load(ordering: .relaxed)
        while seen < value {
            let (exchanged, original) = current.compareExchange(
                expected: seen, desired: value, ordering: .sequentiallyConsistent)
            if exchanged { break }
            seen = original
        }
        wakeIfReached()
    }

    /// Adds `count` to the value.
    public func add(_ count: Int) {
        current.wrappingAdd(UInt64(max(count, 0)), ordering: .sequentiallyConsistent)
        wakeIfReached()
    }

    /// A waiter lowers the lowest mark before it reads the value, and an update writes the
    /// value before it reads the lowest mark (both sequentially consistent): so either the
    /// waiter sees the new value, or the update sees the waiter's mark and wakes it under the
    /// lock the waiter held while it queued itself.
    private func wakeIfReached() {
        guard current.load(ordering: .sequentiallyConsistent) >= lowestMark.load(ordering: .sequentiallyConsistent)
        else { return }
        let ready = waiters.withLock { waiters -> [CheckedContinuation<Void, Never>] in
            let value = current.load(ordering: .sequentiallyConsistent)
            let ready = waiters.filter { $0.mark <= value }.map(\.continuation)
            waiters.removeAll { $0.mark <= value }
            lowestMark.store(waiters.map(\.mark).min() ?? .max, ordering: .sequentiallyConsistent)
            return ready
        }
        for waiter in ready { waiter.resume() }
    }

    /// Returns once the value is at least `mark`.
    public func wait(until mark: UInt64) async {
        if value >= mark { return }
        await withCheckedContinuation { continuation in
            let reached = waiters.withLock { waiters -> Bool in
                if mark < lowestMark.load(ordering: .sequentiallyConsistent) {
                    lowestMark.store(mark, ordering: .sequentiallyConsistent)
                }
                if current.load(ordering: .sequentiallyConsistent) >= mark {
                    lowestMark.store(waiters.map(\.mark).min() ?? .max, ordering: .sequentiallyConsistent)
                    return true
                }
                waiters.append((mark, continuation))
                return false
            }
            if reached { continuation.resume() }
        }
    }
}
