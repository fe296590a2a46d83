import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A gap-free stream of the events that match a filter: first from the log, then live.
///
/// Iterate it once. Cancelling the iterating task, calling ``cancel()`` or releasing the
/// subscription ends it.
public final class EventSubscription: AsyncSequence, Sendable {
    public typealias Element = SubscriptionEvent

    private let channel: SubscriptionChannel
    private let onCancel: @Sendable () -> Void
    /// How events are read: through the build's upcasters (its client's), so that a consumer
    /// sees today's shapes.
    private let upcasting: EventUpcasting

    package init(
        channel: SubscriptionChannel, upcasting: EventUpcasting = .none, onCancel: @escaping @Sendable () -> Void
    ) {
        self.channel = channel
        self.upcasting = upcasting
        self.onCancel = onCancel
    }

    deinit {
        onCancel()
    }

    /// How many times the subscription noticed that publications were lost (dropped at a
    /// high-water mark, or missed while the bus restarted) and filled the gap from the log.
    public var gapsFilled: Int { channel.gaps.load(ordering: .relaxed) }

    /// How far its consumer has got: every matching event at or before `position` is handled
    /// (the consumer has asked for what follows it), and whether the subscription follows the
    /// live stream or reads the log to catch up. Read by a process's ``ConsumerMetrics`` for the
    /// progress reports the bus computes lag from.
    public var progress: (position: UInt64, live: Bool) { channel.progress }

    /// Stops the subscription; iteration ends after what is already buffered.
    public func cancel() {
        onCancel()
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(subscription: self)
    }

    public struct Iterator: AsyncIteratorProtocol {
        // Holding the subscription keeps it alive while it is iterated.
        let subscription: EventSubscription
        var buffer: [SubscriptionChannel.Item] = []
        var index = 0
        var names = TypeNameCache()
        /// The last event handed out: finished with once the next item is asked for.
        var handedOut: UInt64?

        /// The next item; an event is read through the subscription's upcasters.
        public mutating func next() async throws -> SubscriptionEvent? {
            guard let item = try await nextWithEnvelope()?.item else { return nil }
            if case .event(let event) = item, subscription.upcasting.upcasts(event.type) {
                return .event(subscription.upcasting.upcast(event))
            }
            return item
        }

        /// The next item as ``next()`` gives it and, for an event, the envelope bytes the log
        /// holds for it: for tools that copy or export the log as it is.
        package mutating func nextWithEnvelope() async throws -> (item: SubscriptionEvent, envelope: Data?)? {
            if let position = handedOut {
                subscription.channel.finished(through: position)
                handedOut = nil
            }
            if index == buffer.count {
                guard let items = await subscription.channel.take() else { return nil }
                buffer = items
                index = 0
            }
            let item = buffer[index]
            index += 1
            switch item {
            case .event(let position, let envelope):
                handedOut = position
                return (.event(try StoredEvent(envelopeBytes: envelope, names: &names)), envelope)
            case .caughtUp(let head): return (.caughtUp(head: head), nil)
            case .connection(let connected): return (.connection(isConnected: connected), nil)
            case .failure(let error): throw error
            }
        }
    }

    /// Only the events, for consumers that do not care about catch-up and connection news.
    public var events: AsyncThrowingCompactMapSequence<EventSubscription, StoredEvent> {
        compactMap { item in
            if case .event(let event) = item { return event }
            return nil
        }
    }
}
