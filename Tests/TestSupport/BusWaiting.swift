import Bus
import ZeroMQBus

/// Waits on the bus for what a test expects, bounded in time.
extension ZeroMQBusClient {
    /// The first `count` events matching `filter` (and `where`), or fewer if `timeout` passes first.
    public func collect(
        _ filter: EventFilter, count: Int, after position: UInt64 = 0, timeout: Duration = .seconds(30),
        where predicate: @escaping @Sendable (StoredEvent) -> Bool = { _ in true }
    ) async throws -> [StoredEvent] {
        let subscription = subscribe(filter, after: position)
        let collected = Locked<[StoredEvent]>([])
        _ = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                for try await event in subscription.events where predicate(event) {
                    let done = collected.withLock { events in
                        events.append(event)
                        return events.count >= count
                    }
                    if done { return true }
                }
                return false
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return false
            }
            let first = try await group.next() ?? false
            group.cancelAll()
            subscription.cancel()
            return first
        }
        return collected.value
    }
}
