import Bus
import Synchronization

extension EventBus {
    /// The events matching `filter` and `predicate` after `position`, in order, read until
    /// `done` says the events so far are enough or `deadline` passes, whichever comes first: the
    /// one way a test waits for events on the bus. Never waits past `deadline`; what arrived by
    /// then is returned, so the caller says what was missing.
    public func collect(
        _ filter: EventFilter = .all, after position: UInt64 = 0, until deadline: ContinuousClock.Instant,
        where predicate: @escaping @Sendable (StoredEvent) -> Bool = { _ in true },
        done: @escaping @Sendable ([StoredEvent]) -> Bool
    ) async throws -> [StoredEvent] {
        if done([]) { return [] }
        let subscription = subscribe(filter, after: position)
        defer { subscription.cancel() }
        let collected = Collected()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for try await event in subscription.events where predicate(event) {
                    let events = collected.events.withLock { events in
                        events.append(event)
                        return events
                    }
                    if done(events) { return }
                }
            }
            group.addTask { try? await Task.sleep(until: deadline) }
            try await group.next()
            // Buffered events would keep the reader going; end the stream itself.
            subscription.cancel()
            group.cancelAll()
        }
        return collected.events.withLock { $0 }
    }

    /// The first `count` events matching `filter` and `predicate` after `position`, or fewer if
    /// `timeout` passes first.
    public func collect(
        _ filter: EventFilter, count: Int, after position: UInt64 = 0, timeout: Duration = .seconds(30),
        where predicate: @escaping @Sendable (StoredEvent) -> Bool = { _ in true }
    ) async throws -> [StoredEvent] {
        try await collect(filter, after: position, until: .now + timeout, where: predicate) { $0.count >= count }
    }
}
