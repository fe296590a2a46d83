import BureauSchemas
import Bus
import EventLog
import Foundation
import Guards
import Logging
import Runtime
import ServiceLifecycle
import Synchronization

/// Carries accepted reservations and cancellations to the booking service, and publishes
/// what it answered: `ReservationConfirmed`, `ReservationFailed`, `ReservationCancelled` or
/// `CancellationFailed`.
///
/// Every call carries the id of the event that asked for it as its idempotency key, and every
/// outcome has an id derived from that event's position, so that after a crash the adapter
/// finds the accepted events without an outcome, calls again (the service answers as before,
/// never booking twice) and publishes each outcome once. Calls that were not done (no
/// connection, a 503) are retried with exponential backoff and jitter; after
/// ``Configuration/maxAttempts`` the adapter gives up and publishes a failure with the last
/// reason.
///
/// A call whose outcome is unknown (it timed out, lost its connection after the request was
/// sent, or got an answer that cannot be read) is never guessed: the adapter publishes
/// `BookingOutcomeUnknown` (id derived with index 3), then asks the service what the call did
/// (``BookingService/resolve(idempotencyKey:)``) with the same backoff, capped, for as long as
/// it takes, and publishes the outcome the answer gives: confirmed (or cancelled) if the call
/// was done, failed if nothing was done (the service then refuses the call if it arrives
/// late). A restart that finds the marker without an outcome resolves first, rather than
/// calling again.
///
/// An outcome the bus refuses is not taken as published. It is published again with the same
/// backoff, up to ``Configuration/maxAttempts`` times (a refusal may pass: a full disk); if the
/// bus still refuses it (a confirmation code too large for an event, say), a booking it
/// confirmed is cancelled at the booking service, so that the world matches the log, and a
/// failure with the bus's reason, and what became of the booking, is published in its place,
/// under the same id, with an `ErrorRaised`: no reservation stays pending for ever.
public final class BookingAdapterService: Service {
    public struct Configuration: Sendable {
        public var backoff = Backoff(initial: .milliseconds(200), multiplier: 2, maximum: .seconds(5), jitter: 0.2)
        /// Calls tried before giving up on a service that does nothing: 8, about 20 seconds with
        /// the default backoff. Resolving an unknown outcome never gives up.
        public var maxAttempts = 8
        /// Calls in flight at once.
        public var concurrency = 16

        /// Called once the adapter has found where it left off and works live.
        public var onReady: @Sendable () -> Void = {}

        public init() {}
    }

    public static let module = "booking"

    static let inputTypes = [
        Bureau_Reservations_ReservationAcceptedV2.protoMessageName,
        Bureau_Reservations_CancellationAccepted.protoMessageName,
    ]
    static let outputTypes = [
        Bureau_Booking_ReservationConfirmed.protoMessageName, Bureau_Booking_ReservationFailed.protoMessageName,
        Bureau_Booking_ReservationCancelled.protoMessageName, Bureau_Booking_CancellationFailed.protoMessageName,
        Bureau_Booking_BookingOutcomeUnknown.protoMessageName,
    ]

    let service: any BookingService
    let client: any EventBus
    let snapshots: any SnapshotStore
    let configuration: Configuration
    let logger: Logger
    public let statistics: BookingAdapterStatistics
    let metrics: BookingAdapterMetrics
    let consumer: ConsumerMetrics?

    /// - Parameters:
    ///   - metrics: its calls' durations and failures.
    ///   - consumer: what it consumes and publishes, for swift-metrics and the bus's progress reports.
    public init(
        service: any BookingService, client: any EventBus, snapshots: any SnapshotStore, configuration: Configuration,
        logger: Logger, statistics: BookingAdapterStatistics = BookingAdapterStatistics(),
        metrics: BookingAdapterMetrics = BookingAdapterMetrics(), consumer: ConsumerMetrics? = nil
    ) {
        self.metrics = metrics
        self.consumer = consumer
        self.service = service
        self.client = client
        self.snapshots = snapshots
        self.configuration = configuration
        self.logger = logger
        self.statistics = statistics
    }

    /// One call owed to the booking service.
    struct Work: Sendable {
        let position: UInt64
        let eventID: EventID
        let correlation: EventID
        let kind: Kind
        /// Why the call's outcome is unknown, when a `BookingOutcomeUnknown` for it is in the
        /// log: the work is then to resolve it, not to call again.
        var unknown: String?
        /// The span that published the event asking for it, when its chain is traced; else 0.
        var traceParent: UInt64 = 0

        enum Kind: Sendable {
            case book(BookingRequest)
            case cancel(reservationID: String)
        }

        var reservationID: String {
            switch kind {
            case .book(let request): request.reservationId
            case .cancel(let id): id
            }
        }

        /// The call's idempotency key: the id of the event that asked for it.
        var key: String { eventID.description }

        var outcomeID: EventID { .derived(module: BookingAdapterService.module, position: position, index: 0) }
        /// The id of its `BookingOutcomeUnknown`: indices 1 and 2 are for `ErrorRaised`s.
        var unknownID: EventID { .derived(module: BookingAdapterService.module, position: position, index: 3) }
    }

    /// An error to raise with an outcome: the ``ErrorReporter`` builds it once the ids are known.
    struct ErrorReport: Sendable {
        let code: ErrorCode
        let message: String
    }

    public func run() async throws {
        let checkpoints = CheckpointSaver(
            snapshots: snapshots, module: Self.module, backoff: configuration.backoff, logger: logger)
        let start = checkpoints.load()
        let tracker = OpenWork(start: start)
        let subscription = client.subscribe(EventFilter(prefixes: Self.inputTypes + Self.outputTypes), after: start)
        consumer?.follow(subscription)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await checkpoints.retryOwed() }
            let slots = AsyncSemaphore(configuration.concurrency)
            var catchingUp = true
            // Found while catching up, by position: launched once the adapter is live.
            var held: [UInt64: Work] = [:]
            func launch(_ work: Work) async {
                await slots.wait()
                group.addTask {
                    defer { slots.signal() }
                    await self.performTraced(work)
                    if let checkpoint = tracker.finish(work.position) { checkpoints.save(checkpoint) }
                }
            }
            try await withGracefulShutdownHandler {
                for try await item in subscription {
                    switch item {
                    case .event(let event):
                        if event.producerModule == Self.module && Self.outputTypes.contains(event.type) {
                            tracker.saw(event.position)
                            if catchingUp { self.reconcile(event, held: &held, tracker: tracker) }
                            continue
                        }
                        guard let work = self.work(in: event) else {
                            tracker.saw(event.position)
                            continue
                        }
                        consumer?.inputApplied()
                        tracker.open(work.position)
                        if catchingUp { held[work.position] = work } else { await launch(work) }
                    case .caughtUp:
                        guard catchingUp else { continue }
                        catchingUp = false
                        logger.info("caught up", metadata: ["booking.owed": "\(held.count)"])
                        statistics.caughtUp(owed: held.count)
                        configuration.onReady()
                        for work in held.values.sorted(by: { $0.position < $1.position }) { await launch(work) }
                        held = [:]
                    case .connection:
                        continue
                    }
                }
            } onGracefulShutdown: {
                subscription.cancel()
            }
            // Calls still retrying are abandoned; they are owed again after a restart.
            checkpoints.finish()
            group.cancelAll()
        }
    }

    /// An outcome or an outcome-unknown marker this adapter published, met while catching up:
    /// an outcome ends the work it answers (nothing is owed); a marker says the work is to be
    /// resolved with the service rather than called again.
    private func reconcile(_ event: StoredEvent, held: inout [UInt64: Work], tracker: OpenWork) {
        guard var work = held[event.causation] else { return }
        if event.id == work.outcomeID {
            held[work.position] = nil
            tracker.finishWithoutWork(work.position)
        } else if event.id == work.unknownID {
            do {
                let marker = try event.payload(as: Bureau_Booking_BookingOutcomeUnknown.self)
                work.unknown = marker?.reason ?? "unknown"
            } catch {
                // Still to be resolved; only the reason is lost.
                work.unknown = "unknown"
                consumer?.inputMalformed()
                logger.error(
                    "an outcome-unknown marker cannot be read",
                    metadata: ["booking.position": "\(event.position)", "booking.error": "\(error)"])
            }
            held[work.position] = work
        }
    }

    /// What a call to the service came to.
    enum CallResult {
        /// An outcome to publish, with an error to raise if any.
        case outcome(Emitted, ErrorReport?)
        /// The service may or may not have done it, for this reason.
        case unknown(String)
    }

    /// Calls the service until it answers or the attempts run out, resolving an unknown
    /// outcome until the service says what it did, then publishes the outcome. Returns early
    /// only when the adapter is stopping: the work is owed again at the next start.
    func perform(_ work: Work) async {
        var outcome: Emitted
        var raised: ErrorReport?
        if let reason = work.unknown {
            guard let resolved = await resolve(work, reason: reason) else { return }
            outcome = resolved
        } else {
            switch await call(work) {
            case nil:
                return
            case .outcome(let answered, let error):
                outcome = answered
                raised = error
            case .unknown(let reason):
                statistics.outcomeUnknown()
                guard await publishUnknown(work, reason: reason),
                    let resolved = await resolve(work, reason: reason)
                else { return }
                outcome = resolved
            }
        }
        do {
            guard let refusal = try await publishRetryingRefusals(outcome, raised, of: work) else {
                statistics.completed(outcome.type)
                consumer?.published(1)
                logger.info(
                    "booking outcome",
                    metadata: ["booking.reservation": "\(work.reservationID)", "booking.outcome": "\(outcome.type)"])
                return
            }
            // Still refused: a failure the bus can take, with the reason, in its place.
            var message = "the bus refused \(outcome.type): \(refusal)"
            if outcome.type == Bureau_Booking_ReservationConfirmed.protoMessageName {
                message += "; " + (await undoBooking(of: work))
            }
            logger.error(
                "the bus refused a booking outcome",
                metadata: ["booking.reservation": "\(work.reservationID)", "booking.reason": "\(message)"])
            let refused = ErrorReport(code: .outcomeRefused, message: "\(work.reservationID): \(message)")
            outcome = failure(of: work, reason: message)
            if case .rejected(let again) = try await publish(outcome, refused, of: work, errorIndex: 2) {
                logger.error(
                    "the bus refused the failure in place of a booking outcome",
                    metadata: ["booking.reservation": "\(work.reservationID)", "booking.reason": "\(again)"])
                return
            }
            statistics.completed(outcome.type)
            consumer?.published(1)
        } catch {
            logger.error("could not publish a booking outcome", metadata: ["booking.error": "\(error)"])
        }
    }

    /// Calls the service, again after a backoff while it did nothing (no connection, a 503),
    /// up to ``Configuration/maxAttempts`` times; nil if the adapter is stopping.
    private func call(_ work: Work) async -> CallResult? {
        await retrying { (attempt: Int) -> Attempt<CallResult> in
            let began = ContinuousClock.now
            do throws(BookingError) {
                switch work.kind {
                case .book(let request):
                    let code = try await service.book(request, idempotencyKey: work.key)
                    metrics.called("book", took: .now - began)
                    return .done(.outcome(confirmed(work, code: code), nil))
                case .cancel(let id):
                    try await service.cancel(reservationID: id, idempotencyKey: work.key)
                    metrics.called("cancel", took: .now - began)
                    return .done(.outcome(cancelled(work), nil))
                }
            } catch {
                switch work.kind {
                case .book: metrics.called("book", took: .now - began)
                case .cancel: metrics.called("cancel", took: .now - began)
                }
                metrics.failed(error)
                switch error {
                case .refused(let reason):
                    return .done(.outcome(failure(of: work, reason: reason), nil))
                case .invalidRequest(let reason):
                    // Nothing was sent, and the same request would fail the same way: the adapter's
                    // fault, raised as an error, not the service's refusal.
                    logger.error(
                        "a booking call could not be made",
                        metadata: ["booking.reservation": "\(work.reservationID)", "booking.reason": "\(reason)"])
                    return .done(
                        .outcome(
                            failure(of: work, reason: reason),
                            ErrorReport(code: .bookingRequestInvalid, message: "\(work.reservationID): \(reason)")))
                case .unknown(let reason):
                    logger.warning(
                        "the outcome of a booking call is unknown; resolving it",
                        metadata: ["booking.reservation": "\(work.reservationID)", "booking.reason": "\(reason)"])
                    return .done(.unknown(reason))
                case .transient(let reason):
                    statistics.retried()
                    guard attempt < configuration.maxAttempts else {
                        let message = "the booking service did not answer after \(attempt) attempts: \(reason)"
                        return .done(
                            .outcome(
                                failure(of: work, reason: message),
                                ErrorReport(code: .bookingUnavailable, message: "\(work.reservationID): \(message)")))
                    }
                    warnRetrying("the booking service failed; retrying", work, attempt: attempt, reason: "\(reason)")
                    return .again
                }
            }
        }
    }

    /// Logs that a call for `work` failed at `attempt` for `reason`, and is made again.
    func warnRetrying(_ message: Logger.Message, _ work: Work, attempt: Int, reason: String) {
        logger.warning(
            message,
            metadata: [
                "booking.reservation": "\(work.reservationID)", "booking.attempt": "\(attempt)",
                "booking.reason": "\(reason)",
            ])
    }

    /// Publishes `work`'s outcome (under its derived id) and, if any, an `ErrorRaised` (under
    /// the id derived with `errorIndex`); returns what the bus answered for the outcome.
    func publish(
        _ outcome: Emitted, _ raised: ErrorReport?, of work: Work, errorIndex: Int
    ) async throws -> PublishOutcome {
        var events = [
            try outcome.outgoing(
                id: work.outcomeID, module: Self.module, causation: work.position, correlation: work.correlation)
        ]
        if let raised {
            events.append(
                ErrorReporter(module: Self.module, process: client.process).event(
                    code: raised.code, message: raised.message, causation: work.position,
                    id: .derived(module: Self.module, position: work.position, index: errorIndex),
                    correlation: work.correlation))
        }
        let outcomes = try await client.publish(Self.traced(events))
        if outcomes.count > 1, case .rejected(let reason) = outcomes[1] {
            logger.error("the bus refused an ErrorRaised", metadata: ["booking.reason": "\(reason)"])
        }
        // Not the bus's refusal: a client that answers fewer outcomes than events is at fault.
        guard let first = outcomes.first else { throw BusError.unexpectedAnswer("no outcome for \(outcome.type)") }
        return first
    }

    func confirmed(_ work: Work, code: String) -> Emitted {
        var confirmed = Bureau_Booking_ReservationConfirmed()
        confirmed.reservationID = work.reservationID
        confirmed.confirmationCode = code
        return Emitted(confirmed)
    }

    func cancelled(_ work: Work) -> Emitted {
        var cancelled = Bureau_Booking_ReservationCancelled()
        cancelled.reservationID = work.reservationID
        return Emitted(cancelled)
    }

    func failure(of work: Work, reason: String) -> Emitted {
        switch work.kind {
        case .book:
            var failed = Bureau_Booking_ReservationFailed()
            failed.reservationID = work.reservationID
            failed.reason = EventText.bounded(reason)
            return Emitted(failed)
        case .cancel:
            var failed = Bureau_Booking_CancellationFailed()
            failed.reservationID = work.reservationID
            failed.reason = EventText.bounded(reason)
            return Emitted(failed)
        }
    }
}
