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

    package init(capacity: Int, onRoom: @escaping @Sendable () -> Void) {
        self.capacity = capacity
        self.onRoom = onRoom
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
