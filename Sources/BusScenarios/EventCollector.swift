import Bus
import Guards
import Synchronization

/// A subscriber that keeps every matching event it receives, from when it is made until it is
/// stopped, and lets a test wait (bounded) until what it kept is enough: the one way a test
/// waits for events on the bus. ``EventBus/collect(_:after:until:where:onCaughtUp:done:)`` is
/// one made and waited on at once; make one yourself when the subscriber must be there before
/// the test knows what it waits for (every request sent during a failover answered, the head
/// reached after the load).
public final class EventCollector: Sendable {
    /// What the collector is told each time its subscription has read the log up to the head.
    public struct CatchUp: Sendable {
        /// The head the subscription caught up to.
        public let head: UInt64
        /// Whether this is the first time (the log read from the start position); later ones
        /// follow a gap filled from the log.
        public let isFirst: Bool
        /// The events kept so far.
        public let events: [StoredEvent]
    }

    private let shared = Shared()
    private let subscription: EventSubscription
    private let reader: Task<Void, Never>

    /// Subscribes to `filter` after `position` at once and keeps each event that `predicate`
    /// accepts.
    ///
    /// - Parameter onCaughtUp: called, and awaited before the next event is read, each time
    ///   the subscription has read up to the head: it may act (publish more once the log is
    ///   read) and returns whether the events kept are enough, which ends the collecting.
    public init(
        _ bus: any EventBus, _ filter: EventFilter = .all, after position: UInt64 = 0,
        where predicate: @escaping @Sendable (StoredEvent) -> Bool = { _ in true },
        onCaughtUp: @escaping @Sendable (CatchUp) async throws -> Bool = { _ in false }
    ) {
        let subscription = bus.subscribe(filter, after: position)
        let shared = shared
        self.subscription = subscription
        reader = Task {
            do {
                var caughtUp = false
                for try await item in subscription {
                    switch item {
                    case .event(let event):
                        if predicate(event) { shared.keep(event) }
                    case .caughtUp(let head):
                        let catchUp = CatchUp(head: head, isFirst: !caughtUp, events: shared.events)
                        caughtUp = true
                        if try await onCaughtUp(catchUp) {
                            shared.end(.success(()))
                            return
                        }
                    case .connection:
                        break
                    }
                }
                shared.end(.success(()))
            } catch {
                shared.end(.failure(error))
            }
        }
    }

    /// The events kept so far, in order.
    public var events: [StoredEvent] { shared.events }

    /// Waits until `done` says the events kept are enough, the collecting ends (`onCaughtUp`
    /// said so, or the subscription ended) or `deadline` passes, whichever comes first; returns
    /// the events kept by then, so that the caller says what was missing. Throws what ended
    /// the subscription, if it failed before `done` held.
    ///
    /// `done` is called with the events kept so far, now and after each new one; it must not
    /// use the collector.
    public func wait(
        until deadline: ContinuousClock.Instant, for done: @escaping @Sendable ([StoredEvent]) -> Bool
    ) async throws -> [StoredEvent] {
        let shared = shared
        _ = await Timeout.result(until: deadline) { await shared.wait(for: done) }
        let (events, end) = shared.state.withLock { ($0.events, $0.end) }
        if !done(events), case .failure(let error) = end { throw error }
        return events
    }

    /// Ends the subscription; returns the events kept. A later ``wait(until:for:)`` returns at once.
    @discardableResult
    public func stop() -> [StoredEvent] {
        // Buffered events would keep the reader going; end the stream itself.
        subscription.cancel()
        reader.cancel()
        shared.end(.success(()))
        return shared.events
    }

    deinit {
        subscription.cancel()
        reader.cancel()
    }

    /// What the reading task and the waiters share.
    private final class Shared: Sendable {
        struct Waiter {
            let done: @Sendable ([StoredEvent]) -> Bool
            let continuation: CheckedContinuation<Void, Never>
        }

        struct State {
            var events: [StoredEvent] = []
            /// How the collecting ended; nil while it goes on.
            var end: Result<Void, any Error>?
            var waiters: [Int: Waiter] = [:]
            var nextWaiter = 0
        }

        let state = Mutex(State())

        var events: [StoredEvent] { state.withLock { $0.events } }

        func keep(_ event: StoredEvent) {
            let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.events.append(event)
                let events = state.events
                let satisfied = state.waiters.filter { $0.value.done(events) }
                for id in satisfied.keys { state.waiters[id] = nil }
                return satisfied.values.map(\.continuation)
            }
            for continuation in ready { continuation.resume() }
        }

        func end(_ end: Result<Void, any Error>) {
            let waiting = state.withLock { state -> [Waiter] in
                if state.end == nil { state.end = end }
                defer { state.waiters = [:] }
                return Array(state.waiters.values)
            }
            for waiter in waiting { waiter.continuation.resume() }
        }

        /// Returns once `done` holds, the collecting has ended, or the caller is cancelled.
        func wait(for done: @escaping @Sendable ([StoredEvent]) -> Bool) async {
            let id = state.withLock { state in
                defer { state.nextWaiter += 1 }
                return state.nextWaiter
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let now = state.withLock { state -> Bool in
                        if state.end != nil || Task.isCancelled || done(state.events) { return true }
                        state.waiters[id] = Waiter(done: done, continuation: continuation)
                        return false
                    }
                    if now { continuation.resume() }
                }
            } onCancel: {
                let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
                waiter?.continuation.resume()
            }
        }
    }
}
