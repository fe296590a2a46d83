import BureauSchemas
import Bus
import BusTesting
import EventLog
import FaultInjection
import FeatureTestSupport
import Foundation
import Guards
import InMemoryStores
import Logging
import ReservationsFeature
import Runtime
import ServiceLifecycle
import TestSupport
import Testing
import ZeroMQBus

@testable import BookingAdapter

/// The booking adapter at the bus, with the in-memory booking service: on the in-memory twin,
/// and also on a daemon in the process for the tests that take a ``BusTier``.
@Suite(.timeLimit(.minutes(2)))
struct BookingAdapterServiceTests {
    static let outcomes = EventFilter(prefixes: ["bureau.booking."])

    /// Runs `body` on a fresh deployment of `tier` (the in-memory twin unless a test runs live
    /// too), and stops it after.
    static func onBus<T: Sendable>(
        _ tier: BusTier = .inMemory, _ body: (TestDeployment) async throws -> T
    ) async throws -> T {
        try await tier.withDeployment(logger: TestLogging.logger("deployment"), body)
    }

    /// Runs the adapter on `deployment`'s bus until `body` returns; `body` is given an observer's
    /// connection.
    static func withAdapter<T>(
        service: any BookingService, on deployment: TestDeployment,
        snapshots: any SnapshotStore = InMemorySnapshotStore(), maxAttempts: Int = 8,
        _ body: (any EventBus, BookingAdapterStatistics) async throws -> T
    ) async throws -> T {
        let client = try deployment.connect("booking-adapter")
        let configuration = configuration(maxAttempts: maxAttempts)
        let statistics = BookingAdapterStatistics()
        let adapter = BookingAdapterService(
            service: service, client: client, snapshots: snapshots, configuration: configuration,
            logger: TestLogging.logger("booking"), statistics: statistics)
        let group = ServiceGroup(services: [adapter], logger: TestLogging.logger("group"))
        let task = Task { try await group.run() }
        let observer = try deployment.connect("observer")
        let result = try await body(observer, statistics)
        await group.triggerGracefulShutdown()
        try await task.value
        observer.close()
        client.close()
        return result
    }

    static func configuration(maxAttempts: Int = 8) -> BookingAdapterService.Configuration {
        var configuration = BookingAdapterService.Configuration()
        configuration.backoff = Backoff(
            initial: .milliseconds(10), multiplier: 2, maximum: .milliseconds(40), jitter: 0)
        configuration.maxAttempts = maxAttempts
        return configuration
    }

    /// Runs `body` against the adapter on a bus-testing deployment of `tier` (the in-memory twin
    /// unless a test runs live too): given / when / expect at the bus.
    @discardableResult
    static func withFixture<T: Sendable>(
        on tier: BusTier = .inMemory, service: any BookingService, maxAttempts: Int = 8,
        logger: Logger = TestLogging.logger("booking"), consumer: ConsumerMetrics? = nil,
        _ body: (BusFixture, BookingAdapterStatistics) async throws -> T
    ) async throws -> T {
        let statistics = BookingAdapterStatistics()
        let deployment = try await tier.deployment(
            services: [
                { client in
                    BookingAdapterService(
                        service: service, client: client, snapshots: InMemorySnapshotStore(),
                        configuration: configuration(maxAttempts: maxAttempts), logger: logger,
                        statistics: statistics, consumer: consumer)
                }
            ], logger: TestLogging.logger("deployment"))
        return try await deployment.run { deployment in
            try await body(deployment.fixture(router: CommandRouter(commands: [])), statistics)
        }
    }

    /// A reservation asked for through the reservations reducer and carried by the adapter on
    /// `service`, which fails it: every event the request caused, expected to be its acceptance,
    /// its failure and an `ErrorRaised` of the booking module with `code`, within `timeout`.
    static func reservationThatFails(
        with service: any BookingService, raising code: String, within timeout: Duration = .seconds(30)
    ) async throws -> [StoredEvent] {
        let reservations = ReservationsModule.make()
        let deployment = try await TestDeployment.inProcess(
            modules: [reservations],
            services: [
                { client in
                    BookingAdapterService(
                        service: service, client: client, snapshots: InMemorySnapshotStore(),
                        configuration: configuration(), logger: TestLogging.logger("booking"))
                }
            ], logger: TestLogging.logger("deployment"))
        return try await deployment.run { deployment in
            var options = BusFixture.Options()
            options.timeout = timeout
            let fixture = deployment.fixture(router: ModuleRegistry([reservations]).router, options: options)
            try await fixture.given([Emitted(rates(["USD": "1.0832"]))])
            return try await fixture.when(
                command: CommandURL.Reservations.reserve(base: "EUR", quote: "USD", amount: "500.00", rate: "1.0832")
                    .text,
                expect: [
                    EventPattern(type: Bureau_Reservations_ReservationAcceptedV2.protoMessageName),
                    EventPattern(
                        type: Bureau_Booking_ReservationFailed.protoMessageName,
                        fields: .object([("reservationId", .string("*")), ("reason", .string("*"))])),
                    EventPattern(
                        type: Bureau_System_ErrorRaised.protoMessageName,
                        fields: .object([("code", .string(code)), ("module", .string("booking"))])),
                ])
        }
    }

    static func accepted(_ id: String, amount: String = "500.00") -> Emitted {
        Emitted(ReservationFixtures.accepted(id, amount: amount))
    }

    static func cancellation(_ id: String) -> Emitted {
        var event = Bureau_Reservations_CancellationAccepted()
        event.reservationID = id
        return Emitted(event)
    }

    static func confirmed(_ id: String, code: String) -> EventPattern {
        EventPattern(
            Bureau_Booking_ReservationConfirmed.with {
                $0.reservationID = id
                $0.confirmationCode = code
            })
    }

    @Test(arguments: BusTier.allCases)
    func anAcceptedReservationIsBookedAndConfirmedWithTheCode(tier: BusTier) async throws {
        let service = InMemoryBookingService()
        try await Self.withFixture(on: tier, service: service) { fixture, _ in
            let sent = try await fixture.when(Self.accepted("r-1"))
            let outcomes = try await fixture.expect(sent, [Self.confirmed("r-1", code: "MEM-1")])
            #expect(outcomes.first?.causation == sent.position)
        }
        #expect(await service.bookings.count == 1)
    }

    /// An accepted reservation whose payload does not decode cannot be booked; the adapter says
    /// so at error level instead of taking it for another event, counts it as malformed (what
    /// `bureau_consumer_inputs_malformed_total` serves), and books the next one.
    @Test func anUnreadableAcceptedReservationIsSaidNotPassedOver() async throws {
        let service = InMemoryBookingService()
        let captured = CapturedLog()
        let consumer = ConsumerMetrics(consumer: "booking-adapter", process: "test")
        try await Self.withFixture(service: service, logger: captured.logger("booking"), consumer: consumer) {
            fixture, _ in
            // A truncated length-delimited field: not a ReservationAcceptedV2.
            let corrupt = OutgoingEvent(
                type: Bureau_Reservations_ReservationAcceptedV2.protoMessageName, payload: Data([0x0A, 0xFF]))
            _ = try await fixture.client.publish([corrupt])
            let sent = try await fixture.when(Self.accepted("r-2"))
            try await fixture.expect(sent, [Self.confirmed("r-2", code: "MEM-1")])
        }
        let errors = captured.lines.filter { $0.level == .error }.map(\.message)
        #expect(errors.contains { $0.contains("cannot be read; it is not booked") }, "\(errors)")
        #expect(await service.bookings.count == 1)
        #expect(consumer.counts.malformed == 1, "the unreadable one")
        #expect(consumer.counts.applied == 1, "the one booked")
    }

    @Test func transientFailuresAreRetriedThenTheOutcomeIsPublishedOnce() async throws {
        let service = InMemoryBookingService(failFirst: 3)
        let retries = try await Self.withFixture(service: service) { fixture, statistics in
            // Exhaustive: one confirmation and nothing else in the chain.
            try await fixture.when(Self.accepted("r-1"), expect: [Self.confirmed("r-1", code: "MEM-1")])
            return statistics.retries
        }
        #expect(retries == 3)
        #expect(await service.calls == 4)
    }

    @Test func afterTheLastAttemptTheReservationFailsAndAnErrorIsRaised() async throws {
        let service = InMemoryBookingService(failFirst: 100)
        try await Self.withFixture(service: service, maxAttempts: 3) { fixture, _ in
            try await fixture.when(
                Self.accepted("r-1"),
                expect: [
                    EventPattern(
                        Bureau_Booking_ReservationFailed.with {
                            $0.reservationID = "r-1"
                            $0.reason = "the booking service did not answer after 3 attempts: HTTP 503"
                        }),
                    EventPattern(
                        type: Bureau_System_ErrorRaised.protoMessageName,
                        fields: .object([("code", .string("booking-unavailable")), ("module", .string("booking"))])),
                ])
        }
        #expect(await service.calls == 3)
    }

    @Test func aRefusedCancellationFailsAtOnceWithTheServicesReason() async throws {
        let service = InMemoryBookingService()
        try await Self.withFixture(service: service) { fixture, _ in
            try await fixture.when(
                Self.cancellation("r-404"),
                expect: [
                    EventPattern(
                        Bureau_Booking_CancellationFailed.with {
                            $0.reservationID = "r-404"
                            $0.reason = "no booking for reservation r-404"
                        })
                ])
        }
        #expect(await service.calls == 1)
    }

    @Test func aConfirmedReservationIsCancelled() async throws {
        let service = InMemoryBookingService()
        try await Self.withFixture(service: service) { fixture, _ in
            try await fixture.when(Self.accepted("r-1"), expect: [Self.confirmed("r-1", code: "MEM-1")])
            try await fixture.when(
                Self.cancellation("r-1"),
                expect: [EventPattern(Bureau_Booking_ReservationCancelled.with { $0.reservationID = "r-1" })])
        }
        #expect(await service.bookings["r-1"]?.cancelled == true)
    }

    @Test(arguments: BusTier.allCases)
    func aRestartCompletesWhatWasAcceptedWithoutAnOutcomeAndNothingElse(tier: BusTier) async throws {
        try await Self.onBus(tier) { deployment in
            let service = InMemoryBookingService()
            let snapshots = InMemorySnapshotStore()
            // Two bookings done by a first run.
            try await Self.withAdapter(service: service, on: deployment, snapshots: snapshots) { observer, statistics in
                for id in ["r-1", "r-2"] {
                    _ = try await observer.publish(
                        try Self.accepted(id).outgoing(id: .random(), module: "reservations"))
                }
                await statistics.waitUntilCompleted(2)
            }
            // Accepted while no adapter ran.
            let publisher = try deployment.connect("reservations")
            for id in ["r-3", "r-4"] {
                _ = try await publisher.publish(try Self.accepted(id).outgoing(id: .random(), module: "reservations"))
            }
            // A fresh checkpoint store too: the adapter must find the outcomes in the log.
            let owed = try await Self.withAdapter(service: service, on: deployment) { observer, statistics in
                await statistics.waitUntilCompleted(2)
                return statistics.owedAtStart
            }
            #expect(owed == 2)
            let all = try await publisher.collect(Self.outcomes, count: 4)
            #expect(
                Set(try all.compactMap { try $0.payload(as: Bureau_Booking_ReservationConfirmed.self)?.reservationID })
                    == [
                        "r-1", "r-2", "r-3", "r-4",
                    ])
            #expect(await service.bookings.count == 4)
            #expect(await service.calls == 4)
            publisher.close()
        }
    }

    static func unknown(
        _ id: String, _ call: Bureau_Booking_BookingOutcomeUnknown.Call, _ reason: String
    ) -> EventPattern {
        EventPattern(
            Bureau_Booking_BookingOutcomeUnknown.with {
                $0.reservationID = id
                $0.call = call
                $0.reason = reason
            })
    }

    /// Books r-1 through `service`, whose answer to the booking is lost: the outcome is said to
    /// be unknown, then a resolve confirms it as MEM-1. Returns the adapter's statistics.
    static func bookedThroughALostAnswer(
        on tier: BusTier = .inMemory, service: InMemoryBookingService
    ) async throws -> BookingAdapterStatistics {
        try await withFixture(on: tier, service: service) { fixture, statistics in
            try await fixture.when(
                accepted("r-1"),
                expect: [unknown("r-1", .booking, "the answer was lost (simulated)"), confirmed("r-1", code: "MEM-1")])
            return statistics
        }
    }

    @Test(arguments: BusTier.allCases)
    func aBookingWhoseAnswerWasLostShowsUnknownThenIsConfirmedByAResolve(tier: BusTier) async throws {
        let service = InMemoryBookingService(faults: [.answerLost])
        let unknown = try await Self.bookedThroughALostAnswer(on: tier, service: service).unknownOutcomes
        #expect(unknown == 1)
        // Resolved, not booked again.
        #expect(await service.calls == 1)
        #expect(await service.resolves == 1)
    }

    @Test func aBookingThatNeverArrivedFailsAndArrivingLateItIsRefused() async throws {
        let service = InMemoryBookingService(faults: [.requestHeld])
        try await Self.withFixture(service: service) { fixture, _ in
            let sent = try await fixture.when(Self.accepted("r-1"))
            try await fixture.expect(
                sent,
                [
                    Self.unknown("r-1", .booking, "timed out (simulated)"),
                    EventPattern(
                        Bureau_Booking_ReservationFailed.with {
                            $0.reservationID = "r-1"
                            $0.reason =
                                "the booking service did not book it: the call's outcome was unknown (timed out "
                                + "(simulated)), and the service answered: nothing was done under the Idempotency-Key "
                                + "\(sent.id); it is closed: a call with it is refused"
                        }),
                ])
        }
        // The request that was on its way arrives: the resolve closed its key, so nothing is booked.
        #expect(await service.deliverHeld() == 1)
        #expect(await service.bookings.isEmpty)
    }

    @Test func aResolveThatFailsIsAskedAgainWithBackoffUntilTheServiceAnswers() async throws {
        let service = InMemoryBookingService(faults: [.answerLost, .unavailable, .requestLost, .answerLost])
        let retries = try await Self.bookedThroughALostAnswer(service: service).resolveRetries
        #expect(retries == 3)
        #expect(await service.resolves == 4)
    }

    @Test func aCancellationWhoseAnswerWasLostIsResolvedAsCancelled() async throws {
        let service = InMemoryBookingService()
        try await Self.withFixture(service: service) { fixture, _ in
            try await fixture.when(Self.accepted("r-1"), expect: [Self.confirmed("r-1", code: "MEM-1")])
            await service.setFaults([.answerLost])
            try await fixture.when(
                Self.cancellation("r-1"),
                expect: [
                    Self.unknown("r-1", .cancellation, "the answer was lost (simulated)"),
                    EventPattern(Bureau_Booking_ReservationCancelled.with { $0.reservationID = "r-1" }),
                ])
        }
        #expect(await service.bookings["r-1"]?.cancelled == true)
    }

    @Test func aRestartResolvesACallLeftUnknownInsteadOfCallingAgainAndPublishesOnce() async throws {
        try await Self.onBus { deployment in
            // The answer is lost and the service cannot resolve: the first run stops while unknown.
            let service = InMemoryBookingService(
                faults: [.answerLost] + Array(repeating: .unavailable, count: 10_000))
            try await Self.withAdapter(service: service, on: deployment) { observer, _ in
                _ = try await observer.publish(try Self.accepted("r-1").outgoing(id: .random(), module: "reservations"))
                let marker = try await observer.collect(
                    EventFilter(prefixes: [Bureau_Booking_BookingOutcomeUnknown.protoMessageName]), count: 1)
                #expect(marker.count == 1)
            }
            #expect(await service.bookings["r-1"] != nil)
            await service.setFaults([])
            let owed = try await Self.withAdapter(service: service, on: deployment) { observer, statistics in
                await statistics.waitUntilCompleted(1)
                return statistics.owedAtStart
            }
            #expect(owed == 1)
            // Resolved, not called again.
            #expect(await service.calls == 1)
            let reader = try deployment.connect("reader")
            // Three asked for, two expected: the bound shows there is no second outcome.
            let all = try await reader.collect(Self.outcomes, count: 3, timeout: .seconds(1))
            reader.close()
            #expect(
                all.map(\.type) == [
                    Bureau_Booking_BookingOutcomeUnknown.protoMessageName,
                    Bureau_Booking_ReservationConfirmed.protoMessageName,
                ])
            #expect(try all.last?.payload(as: Bureau_Booking_ReservationConfirmed.self)?.confirmationCode == "MEM-1")
        }
    }

    @Test func checkpointSavesThatFailWhileTheStoreIsAwayStopNothingAndALaterOneCoversThem() async throws {
        // Given a checkpoint store that fails its next two saves, as a store failing over does
        try await Self.onBus { deployment in
            let service = InMemoryBookingService()
            let store = FailingSnapshotStore()
            store.failSaves(2)
            // When three reservations are accepted, one after the other
            var last: UInt64 = 0
            try await Self.withAdapter(service: service, on: deployment, snapshots: store) { observer, statistics in
                for (index, id) in ["r-1", "r-2", "r-3"].enumerated() {
                    let sent = try await observer.publish(
                        try Self.accepted(id).outgoing(id: .random(), module: "reservations"))
                    last = try #require(sent.position)
                    await statistics.waitUntilCompleted(index + 1)
                }
                // Then a checkpoint saved after the failed ones covers the last
                // (a work counts as completed before its checkpoint is saved: the save is awaited)
                let covering = last
                let saved = await Timeout.result(within: .seconds(10)) { await store.saved(atLeast: covering) }
                #expect(saved != nil, "no checkpoint covering the last work was saved")
            }
            // And every one was booked once, though the first two checkpoints could not be saved
            #expect(await service.bookings.count == 3)
            let checkpoint = try #require(
                store.load(
                    CheckpointSaver.Checkpoint.self, module: BookingAdapterService.module, stateVersion: 1
                ) { _ in })
            #expect(checkpoint.position >= last)
            // And a restart on that checkpoint books nothing again
            let owed = try await Self.withAdapter(service: service, on: deployment, snapshots: store) { _, statistics in
                await statistics.waitUntilCaughtUp()
                return statistics.owedAtStart
            }
            #expect(owed == 0)
            #expect(await service.calls == 3)
        }
    }

    @Test func aCheckpointWhoseSaveFailedIsSavedOnceTheStoreIsBackWithNoFurtherWork() async throws {
        // Given a checkpoint store that fails its next save, as a store failing over does
        try await Self.onBus { deployment in
            let service = InMemoryBookingService()
            let store = FailingSnapshotStore()
            store.failSaves(1)
            // When one reservation is accepted, and nothing after it
            try await Self.withAdapter(service: service, on: deployment, snapshots: store) { observer, statistics in
                let sent = try await observer.publish(
                    try Self.accepted("r-1").outgoing(id: .random(), module: "reservations"))
                let last = try #require(sent.position)
                await statistics.waitUntilCompleted(1)
                // Then its checkpoint is saved all the same, after the backoff, covering it
                let saved = await Timeout.result(within: .seconds(10)) { await store.saved(atLeast: last) }
                #expect(saved != nil, "the checkpoint was not saved again")
            }
            #expect(await service.bookings.count == 1)
        }
    }
}
