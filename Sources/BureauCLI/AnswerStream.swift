import Bus
import Guards

/// The events that may answer a request, read by one iterator for the answer and then for the
/// outcome after it.
///
/// A subscription's iterator takes what has arrived in batches: a second iterator, made for the
/// outcome once the first had found the answer, missed an outcome that came in the answer's
/// batch (the answer and a booking's confirmation a moment apart, the sender slow to read), and
/// `bureau send --outcome` said "no outcome within 10 s" for a booking the log held.
struct AnswerStream: Sendable {
    let subscription: EventSubscription
    // Unchecked: one wait at a time uses the iterator, each after the one before has returned.
    private let iterator: UncheckedBox<EventSubscription.Iterator>

    init(_ subscription: EventSubscription) {
        self.subscription = subscription
        iterator = UncheckedBox(subscription.makeAsyncIterator())
    }

    /// The next event `wanted` accepts, or nil at the deadline.
    func first(
        until deadline: ContinuousClock.Instant, where wanted: @escaping @Sendable (StoredEvent) -> Bool
    ) async throws -> StoredEvent? {
        let iterator = iterator
        let found = try await Timeout.result(until: deadline) { () async throws -> StoredEvent? in
            while let item = try await iterator.value.next() {
                if case .event(let event) = item, wanted(event) { return event }
            }
            return nil
        }
        return found ?? nil
    }

    /// Stops the subscription.
    func cancel() {
        subscription.cancel()
    }
}
