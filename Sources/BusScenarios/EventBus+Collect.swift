import Bus

extension EventBus {
    /// The events matching `filter` and `predicate` after `position`, in order, read until
    /// `done` (or `onCaughtUp`) says the events so far are enough or `deadline` passes,
    /// whichever comes first: the one way a test waits for events on the bus (an
    /// ``EventCollector`` made and waited on at once). Never waits past `deadline`; what arrived
    /// by then is returned, so the caller says what was missing.
    ///
    /// - Parameter onCaughtUp: called each time the subscription has read the log up to the
    ///   head (``EventCollector/CatchUp``); it may act, and returns whether to stop there.
    public func collect(
        _ filter: EventFilter = .all, after position: UInt64 = 0, until deadline: ContinuousClock.Instant,
        where predicate: @escaping @Sendable (StoredEvent) -> Bool = { _ in true },
        onCaughtUp: @escaping @Sendable (EventCollector.CatchUp) async throws -> Bool = { _ in false },
        done: @escaping @Sendable ([StoredEvent]) -> Bool
    ) async throws -> [StoredEvent] {
        if done([]) { return [] }
        let collector = EventCollector(self, filter, after: position, where: predicate, onCaughtUp: onCaughtUp)
        defer { collector.stop() }
        return try await collector.wait(until: deadline, for: done)
    }

    /// The first `count` events matching `filter` and `predicate` after `position`, or fewer if
    /// `timeout` passes first.
    public func collect(
        _ filter: EventFilter, count: Int, after position: UInt64 = 0, timeout: Duration = .seconds(30),
        where predicate: @escaping @Sendable (StoredEvent) -> Bool = { _ in true }
    ) async throws -> [StoredEvent] {
        // Events come in batches: the one that reaches `count` may bring more, which are not asked for.
        Array(
            try await collect(filter, after: position, until: .now + timeout, where: predicate) { $0.count >= count }
                .prefix(count))
    }
}
