import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Hands a subscription's items from the client's socket thread to the task that consumes them.
///
/// Bounded: when it holds `capacity` items the socket thread stops reading for that
/// subscription (libzmq then drops publications for it, which the tracker notices and fills
/// from the log); when the consumer empties it, `onRoom` wakes the socket thread.
package final class SubscriptionChannel: Sendable {
    package enum Item: Sendable {
        case event(position: UInt64, envelope: Data)
        case caughtUp(head: UInt64)
        case connection(Bool)
        /// The subscription cannot go on; the consumer's iteration throws this.
        case failure(BusError)
    }

    private struct State {
        var items: [Item] = []
        var waiter: CheckedContinuation<[Item]?, Never>?
        var finished = false
        var paused = false
    }

    package let capacity: Int
    /// How many times the subscription noticed a gap and read the log to fill it.
    package let gaps = Atomic<Int>(0)
    private let state = Mutex(State())
    private let onRoom: @Sendable () -> Void
    /// Every matching event at or before it has been pushed: the tracker's cursor, which a
    /// heartbeat moves with nothing to push. Set after the push, by whoever feeds the channel.
    private let pushedThrough: Atomic<UInt64>
    /// Whether the tracker follows the live stream (or reads the log to catch up).
    private let following = Atomic<Bool>(false)
    /// The position of the last event the consumer has finished with: set by the iterator when
    /// the consumer asks for the item after it.
    private let finishedThrough: Atomic<UInt64>

    package init(capacity: Int, after position: UInt64 = 0, onRoom: @escaping @Sendable () -> Void) {
        self.capacity = capacity
        self.onRoom = onRoom
        pushedThrough = Atomic(position)
        finishedThrough = Atomic(position)
    }

    /// Records the tracker's cursor and whether it is live, after what it delivered was pushed.
    package func advance(through cursor: UInt64, live: Bool) {
        pushedThrough.store(cursor, ordering: .releasing)
        following.store(live, ordering: .relaxed)
    }

    /// The consumer has finished with the event at `position` (it asks for the next item).
    package func finished(through position: UInt64) {
        finishedThrough.store(position, ordering: .relaxed)
    }

    /// How far the consumer has got: every matching event at or before it is handled. While
    /// the consumer waits for items with none left, it has handled all that was pushed, so
    /// the cursor (which heartbeats move past events it does not want) counts as its own.
    package var progress: (position: UInt64, live: Bool) {
        state.withLock { state in
            let finished = finishedThrough.load(ordering: .relaxed)
            let live = following.load(ordering: .relaxed)
            guard state.waiter != nil else { return (finished, live) }
            return (max(finished, pushedThrough.load(ordering: .acquiring)), live)
        }
    }

    /// Adds items; returns whether there is room for more. Called by the socket thread.
    @discardableResult
    package func push(_ items: [Item]) -> Bool {
        guard !items.isEmpty else { return hasRoom }
        let (waiter, handed, room) = state.withLock { state -> (CheckedContinuation<[Item]?, Never>?, [Item], Bool) in
            guard !state.finished else { return (nil, [], false) }
            state.items += items
            var waiter: CheckedContinuation<[Item]?, Never>?
            var handed: [Item] = []
            if let pending = state.waiter {
                waiter = pending
                handed = state.items
                state.items = []
                state.waiter = nil
            }
            let room = state.items.count < capacity
            if !room { state.paused = true }
            return (waiter, handed, room)
        }
        waiter?.resume(returning: handed)
        return room
    }

    package var hasRoom: Bool {
        state.withLock { state in
            let room = state.items.count < capacity
            if !room { state.paused = true }
            return room
        }
    }

    /// Ends the channel; the consumer gets what is buffered, then nil.
    package func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<[Item]?, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.items.isEmpty ? state.waiter : nil
        }
        waiter?.resume(returning: nil)
    }

    /// Everything buffered, waiting if there is nothing; nil once finished and drained or cancelled.
    package func take() async -> [Item]? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[Item]?, Never>) in
                let (ready, wake) = state.withLock { state -> ([Item]??, Bool) in
                    if !state.items.isEmpty {
                        let items = state.items
                        state.items = []
                        let wake = state.paused
                        state.paused = false
                        return (.some(items), wake)
                    }
                    if state.finished || Task.isCancelled { return (.some(nil), false) }
                    state.waiter = continuation
                    let wake = state.paused
                    state.paused = false
                    return (nil, wake)
                }
                if wake { onRoom() }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<[Item]?, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }
}
