import BureauSchemas

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A connection to the bus: publish with acknowledgement, subscribe from a position without
/// gaps. What hosts, adapters, the front-end, tools and tests talk to.
///
/// Two implementations keep the same promises, and `BusContractTests` runs one suite against
/// both: `ZeroMQBusClient` (ZeroMQBus), a client of a `bureau bus` daemon, and `InMemoryBus`
/// (InMemoryBus), a bus inside the process, for tests that need no daemon.
///
/// The promises:
/// - **Publishing** returns one outcome per event, in order. Valid events are committed at
///   strictly increasing positions without holes; an event whose id was committed before is
///   `DUPLICATE` with the position it has (within the deduplication window); an invalid one is
///   `REJECTED` with a reason, and is not stored. A request that is not answered is sent again
///   with the same ids, so an event is committed at most once however often it is sent.
/// - **Subscribing** after a position delivers every committed event matching the filter whose
///   position is greater, in order, exactly once: first what the log holds, then live events.
///   `caughtUp` is yielded each time reading reaches the head. A consumer that does not keep up
///   is never skipped: delivery pauses while its buffer is full and resumes from the log.
public protocol EventBus: Sendable {
    /// The process name stamped on every envelope published, as its producer.
    var process: String { get }

    /// Publishes events; returns what the bus did with each, in the same order.
    func publish(_ events: [OutgoingEvent]) async throws -> [PublishOutcome]

    /// Publishes producer envelopes as they are (tools that relay bytes); the bus's own answer.
    func publish(envelopes: [Data]) async throws -> Bureau_Bus_PublishAck

    /// Every committed event matching `filter` after `position`, from the log and then live.
    ///
    /// - Parameter bufferCapacity: how many events may wait for the consumer before delivery
    ///   pauses (it goes on from the log when the consumer has room).
    func subscribe(_ filter: EventFilter, after position: UInt64, bufferCapacity: Int) -> EventSubscription

    /// Asks the bus whether it is up; throws ``BusError/noAnswer(endpoint:seconds:)`` after `timeout`.
    func ping(timeout: Duration) async throws -> BusStatus

    /// Tells the bus how far this process's consumers have got (``ConsumerMetrics``); returns at
    /// once, awaiting no answer. The bus computes every consumer's lag from the last report it
    /// had, so a consumer that stops reporting is seen falling behind (README, "Watching it run").
    func report(_ progress: [Bureau_Bus_ConsumerProgress])

    /// The bus's own figures and every consumer that reports to it, with its lag as the bus
    /// sees it now; throws ``BusError/noAnswer(endpoint:seconds:)`` after `timeout`.
    func statistics(timeout: Duration) async throws -> Bureau_Bus_BusStats

    /// Ends the connection: pending calls fail with ``BusError/closed`` and subscriptions end.
    func close()
}

extension EventBus {
    /// Publishes one event; see ``publish(_:)-([OutgoingEvent])``.
    public func publish(_ event: OutgoingEvent) async throws -> PublishOutcome {
        guard let outcome = try await publish([event]).first else {
            throw BusError.refused(code: "bad-ack", message: "the bus answered no result for one event")
        }
        return outcome
    }

    public func subscribe(_ filter: EventFilter = .all, after position: UInt64 = 0) -> EventSubscription {
        subscribe(filter, after: position, bufferCapacity: 8192)
    }

    public func ping() async throws -> BusStatus {
        try await ping(timeout: .seconds(2))
    }
}
