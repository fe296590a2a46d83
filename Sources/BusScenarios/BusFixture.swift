import BureauSchemas
import Bus
import EventLog
import Runtime
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Given / when / expect against a running bus: TCA's TestStore and Axon's fixtures, over the wire.
///
/// `given` publishes what has already happened; `when` publishes one event or command URL;
/// `expect` awaits the events in its chain (correlated with it), in any order, since modules
/// answer concurrently. Exhaustive by default: an event in the chain that no pattern matches
/// fails the test, and so does a pattern no event matches within ``Options/timeout``. Absence
/// cannot be awaited, so after the last expected event an exhaustive `expect` keeps listening
/// for ``Options/quiet`` before it passes.
///
/// Failures are thrown as ``ExpectationFailure``, so a failing XCTest or swift-testing test
/// shows the report.
public final class BusFixture: Sendable {
    public struct Options: Sendable {
        /// How long `expect` awaits the events it expects, and `given(command:)` its answer.
        public var timeout: Duration = .seconds(10)
        /// How long an exhaustive `expect` listens for anything unexpected after the last expected event.
        public var quiet: Duration = .milliseconds(300)
        public var exhaustivity: Exhaustivity = .exhaustive

        public init() {}
    }

    public enum Exhaustivity: Sendable, Equatable {
        /// Every event in the chain must be expected.
        case exhaustive
        /// Events nobody expected are ignored.
        case nonExhaustive
    }

    public let client: any EventBus
    public let router: CommandRouter
    public let options: Options

    /// - Parameter router: turns command URLs into request events (`ModuleRegistry.router`).
    public init(client: any EventBus, router: CommandRouter = CommandRouter(commands: []), options: Options = Options())
    {
        self.client = client
        self.router = router
        self.options = options
    }

    // MARK: Given

    /// Publishes events that have already happened and returns them as committed.
    @discardableResult
    public func given(_ events: [Emitted]) async throws -> [Stimulus] {
        var result: [Stimulus] = []
        for event in events { result.append(try await publish(event, label: event.type)) }
        return result
    }

    /// Sends a command URL and awaits its answer (an accepted fact or a rejection), which it returns.
    @discardableResult
    public func given(command url: String) async throws -> StoredEvent {
        let route = try router.route(url)
        let stimulus = try await publish(route.request, label: url)
        let answers = Set(route.command.answers)
        let (events, _) = try await collect(after: stimulus.position, until: .now + options.timeout) { events in
            events.contains { event in event.correlation == stimulus.id && answers.contains(event.type) }
        }
        guard let answer = events.first(where: { $0.correlation == stimulus.id && answers.contains($0.type) }) else {
            throw ExpectationFailure(
                stimulus: stimulus,
                missing: answers.sorted().map { (EventPattern(type: $0), nil) }, unexpected: [],
                waited: options.timeout)
        }
        return answer
    }

    // MARK: When

    /// Publishes the event whose consequences `expect` checks.
    public func when(_ event: Emitted) async throws -> Stimulus {
        try await publish(event, label: event.type)
    }

    /// Routes a command URL to its request event and publishes it; throws ``CommandError`` for
    /// a URL that does not route (nothing is published then).
    public func when(command url: String) async throws -> Stimulus {
        try await publish(try router.route(url).request, label: url)
    }

    // MARK: Expect

    /// Awaits the events of `stimulus`'s chain and checks them against `patterns`; returns the
    /// matched events in the order of `patterns`.
    ///
    /// Throws ``ExpectationFailure`` naming what was missing and what was unexpected.
    @discardableResult
    public func expect(
        _ stimulus: Stimulus, _ patterns: [EventPattern], exhaustivity: Exhaustivity? = nil,
        timeout: Duration? = nil
    ) async throws -> [StoredEvent] {
        let exhaustivity = exhaustivity ?? options.exhaustivity
        let timeout = timeout ?? options.timeout
        let start = ContinuousClock.now
        let inChain: @Sendable (StoredEvent) -> Bool = { $0.correlation == stimulus.id }
        // Until every pattern is matched or the timeout: an event still on its way is not
        // reported missing because an unexpected one came first.
        var (events, lastPosition) = try await collect(after: stimulus.position, until: .now + timeout) { events in
            Assignment(patterns: patterns, events: events.filter(inChain)).missing.isEmpty
        }
        if exhaustivity == .exhaustive {
            events += try await collect(after: lastPosition, until: .now + options.quiet) { _ in false }.events
        }
        let assignment = Assignment(patterns: patterns, events: events.filter(inChain))
        let unexpected = exhaustivity == .exhaustive ? assignment.unexpected : []
        guard assignment.missing.isEmpty, unexpected.isEmpty else {
            throw ExpectationFailure(
                stimulus: stimulus,
                missing: assignment.missing.map { index in
                    (patterns[index], Self.closest(to: patterns[index], among: assignment.unexpected))
                },
                unexpected: unexpected, waited: .now - start)
        }
        return patterns.indices.compactMap { assignment.matched[$0] }
    }

    /// `when(command:)` then `expect`.
    @discardableResult
    public func when(
        command url: String, expect patterns: [EventPattern], exhaustivity: Exhaustivity? = nil
    ) async throws -> [StoredEvent] {
        try await expect(try await when(command: url), patterns, exhaustivity: exhaustivity)
    }

    /// `when(_:)` then `expect`.
    @discardableResult
    public func when(
        _ event: Emitted, expect patterns: [EventPattern], exhaustivity: Exhaustivity? = nil
    ) async throws -> [StoredEvent] {
        try await expect(try await when(event), patterns, exhaustivity: exhaustivity)
    }

    // MARK: Internals

    private func publish(_ event: Emitted, label: String) async throws -> Stimulus {
        try await publish(type: event.type, payload: try event.payload(), label: label)
    }

    /// Publishes an event given by its type name and payload bytes, as scenario files do.
    func publish(type: String, payload: Data, label: String) async throws -> Stimulus {
        let outgoing = OutgoingEvent(id: .random(), type: type, payload: payload, module: "")
        switch try await client.publish(outgoing) {
        case .committed(let position), .duplicate(let position):
            return Stimulus(id: outgoing.id, type: outgoing.type, position: position, label: label)
        case .rejected(let reason):
            throw BusTestingError("the bus refused \(label): \(reason)")
        }
    }

    /// Events after `position` until `done` says so or the deadline passes; returns them and
    /// the position of the last one read.
    private func collect(
        after position: UInt64, until deadline: ContinuousClock.Instant,
        done: @escaping @Sendable ([StoredEvent]) -> Bool
    ) async throws -> (events: [StoredEvent], lastPosition: UInt64) {
        let events = try await client.collect(.all, after: position, until: deadline, done: done)
        return (events, events.last?.position ?? position)
    }

    /// The unexpected event of the same type with the fewest differing fields.
    private static func closest(
        to pattern: EventPattern, among events: [StoredEvent]
    ) -> (event: StoredEvent, mismatches: [FieldDifference])? {
        events.compactMap { event in pattern.mismatches(in: event).map { (event, $0) } }
            .min { $0.1.count < $1.1.count }
    }
}
