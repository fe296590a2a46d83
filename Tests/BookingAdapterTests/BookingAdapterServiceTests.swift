import BookingAdapter
import BureauSchemas
import Bus
import EventLog
import Runtime
import ServiceLifecycle
import TestSupport
import Testing

/// The booking adapter on a real in-process bus, with the in-memory booking service.
@Suite(.timeLimit(.minutes(2)))
struct BookingAdapterServiceTests {
    static let outcomes = EventFilter(prefixes: ["bureau.booking."])

    /// Runs the adapter until `body` returns.
    static func withAdapter<T>(
        service: any BookingService, bus: TestBus, snapshots: any SnapshotStore = InMemorySnapshotStore(),
        maxAttempts: Int = 8, _ body: (BusClient, BookingAdapterStatistics) async throws -> T
    ) async throws -> T {
        let client = try bus.client("booking-adapter")
        var configuration = BookingAdapterService.Configuration()
        configuration.backoff = Backoff(
            initial: .milliseconds(10), multiplier: 2, maximum: .milliseconds(40), jitter: 0)
        configuration.maxAttempts = maxAttempts
        let statistics = BookingAdapterStatistics()
        let adapter = BookingAdapterService(
            service: service, client: client, snapshots: snapshots, configuration: configuration,
            logger: TestLogging.logger("booking"), statistics: statistics)
        let group = ServiceGroup(services: [adapter], logger: TestLogging.logger("group"))
        let task = Task { try await group.run() }
        let observer = try bus.client("observer")
        let result = try await body(observer, statistics)
        await group.triggerGracefulShutdown()
        try await task.value
        observer.close()
        client.close()
        return result
    }

    static func accepted(_ id: String, amount: String = "500.00") throws -> OutgoingEvent {
        var event = Bureau_Reservations_ReservationAccepted()
        event.reservationID = id
        event.base = "EUR"
        event.quote = "USD"
        event.amount = amount
        event.rate = "1.0832"
        event.quoteAmount = "541.60"
        return try Emitted(event).outgoing(id: EventID.random(), module: "reservations")
    }

    static func cancellation(_ id: String) throws -> OutgoingEvent {
        var event = Bureau_Reservations_CancellationAccepted()
        event.reservationID = id
        return try Emitted(event).outgoing(id: EventID.random(), module: "reservations")
    }

    @Test func anAcceptedReservationIsBookedAndConfirmedWithTheCode() async throws {
        let bus = try TestBus()
        let service = InMemoryBookingService()
        let outcomes = try await Self.withAdapter(service: service, bus: bus) { observer, _ in
            let accepted = try Self.accepted("r-1")
            _ = try await observer.publish(accepted)
            return try await observer.collect(Self.outcomes, count: 1)
        }
        let confirmed = try #require(try outcomes.first?.payload(as: Bureau_Booking_ReservationConfirmed.self))
        #expect(confirmed.reservationID == "r-1")
        #expect(confirmed.confirmationCode == "MEM-1")
        #expect(outcomes.first?.causation == 1)
        #expect(await service.bookings.count == 1)
    }

    @Test func transientFailuresAreRetriedThenTheOutcomeIsPublishedOnce() async throws {
        let bus = try TestBus()
        let service = InMemoryBookingService(failFirst: 3)
        let (outcomes, retries) = try await Self.withAdapter(service: service, bus: bus) { observer, statistics in
            _ = try await observer.publish(try Self.accepted("r-1"))
            await statistics.waitUntilCompleted(1)
            return (try await observer.collect(Self.outcomes, count: 1), statistics.retries)
        }
        #expect(outcomes.map(\.type) == [Bureau_Booking_ReservationConfirmed.protoMessageName])
        #expect(retries == 3)
        #expect(await service.calls == 4)
    }

    @Test func afterTheLastAttemptTheReservationFailsAndAnErrorIsRaised() async throws {
        let bus = try TestBus()
        let service = InMemoryBookingService(failFirst: 100)
        let events = try await Self.withAdapter(service: service, bus: bus, maxAttempts: 3) { observer, _ in
            _ = try await observer.publish(try Self.accepted("r-1"))
            return try await observer.collect(
                EventFilter(prefixes: ["bureau.booking.", Bureau_System_ErrorRaised.protoMessageName]), count: 2)
        }
        let failed = try #require(try events.first?.payload(as: Bureau_Booking_ReservationFailed.self))
        #expect(failed.reason == "the booking service did not answer after 3 attempts: HTTP 503")
        let raised = try #require(try events.last?.payload(as: Bureau_System_ErrorRaised.self))
        #expect(raised.code == "booking-unavailable")
        #expect(raised.module == "booking")
        #expect(await service.calls == 3)
    }

    @Test func aRefusedCancellationFailsAtOnceWithTheServicesReason() async throws {
        let bus = try TestBus()
        let service = InMemoryBookingService()
        let outcomes = try await Self.withAdapter(service: service, bus: bus) { observer, _ in
            _ = try await observer.publish(try Self.cancellation("r-404"))
            return try await observer.collect(Self.outcomes, count: 1)
        }
        let failed = try #require(try outcomes.first?.payload(as: Bureau_Booking_CancellationFailed.self))
        #expect(failed.reservationID == "r-404")
        #expect(failed.reason == "no booking for reservation r-404")
        #expect(await service.calls == 1)
    }

    @Test func aConfirmedReservationIsCancelled() async throws {
        let bus = try TestBus()
        let service = InMemoryBookingService()
        let outcomes = try await Self.withAdapter(service: service, bus: bus) { observer, _ in
            _ = try await observer.publish(try Self.accepted("r-1"))
            _ = try await observer.collect(Self.outcomes, count: 1)
            _ = try await observer.publish(try Self.cancellation("r-1"))
            return try await observer.collect(Self.outcomes, count: 2)
        }
        #expect(
            outcomes.map(\.type) == [
                Bureau_Booking_ReservationConfirmed.protoMessageName,
                Bureau_Booking_ReservationCancelled.protoMessageName,
            ])
        #expect(await service.bookings["r-1"]?.cancelled == true)
    }

    @Test func aRestartCompletesWhatWasAcceptedWithoutAnOutcomeAndNothingElse() async throws {
        let bus = try TestBus()
        let service = InMemoryBookingService()
        let snapshots = InMemorySnapshotStore()
        // Two bookings done by a first run.
        try await Self.withAdapter(service: service, bus: bus, snapshots: snapshots) { observer, statistics in
            for id in ["r-1", "r-2"] { _ = try await observer.publish(try Self.accepted(id)) }
            await statistics.waitUntilCompleted(2)
        }
        // Accepted while no adapter ran.
        let publisher = try bus.client("reservations")
        for id in ["r-3", "r-4"] { _ = try await publisher.publish(try Self.accepted(id)) }
        // A fresh checkpoint store too: the adapter must find the outcomes in the log.
        let owed = try await Self.withAdapter(service: service, bus: bus) { observer, statistics in
            await statistics.waitUntilCompleted(2)
            return statistics.owedAtStart
        }
        #expect(owed == 2)
        let all = try await publisher.collect(Self.outcomes, count: 4)
        #expect(
            Set(try all.compactMap { try $0.payload(as: Bureau_Booking_ReservationConfirmed.self)?.reservationID }) == [
                "r-1", "r-2", "r-3", "r-4",
            ])
        #expect(await service.bookings.count == 4)
        #expect(await service.calls == 4)
        publisher.close()
    }
}
