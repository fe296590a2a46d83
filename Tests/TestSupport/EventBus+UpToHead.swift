import Bus
import BusTesting

extension EventBus {
    /// The events matching `filter` in the log up to its head, read once to the head: what has
    /// been published by now. For a test that has seen the publisher finish (stopped, killed,
    /// or answered what it was given) and checks what it did not publish, without waiting a
    /// while for what might come. Throws if the head is not reached within `timeout`.
    public func eventsUpToHead(_ filter: EventFilter, timeout: Duration = .seconds(30)) async throws -> [StoredEvent] {
        let head = Locked<UInt64?>(nil)
        let events = try await collect(
            filter, until: .now + timeout,
            onCaughtUp: { catchUp in
                head.withLock { $0 = catchUp.head }
                return true
            }, done: { _ in false })
        guard head.value != nil else {
            throw TestSupportError("the log was not read up to its head within \(timeout)")
        }
        return events
    }
}
