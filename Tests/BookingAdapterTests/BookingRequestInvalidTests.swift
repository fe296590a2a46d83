import BookingAdapter
import BureauSchemas
import Bus
import BusTesting
import EventLog
import FeatureTestSupport
import Foundation
import ReservationsFeature
import Runtime
import TestSupport
import Testing

/// A booking service client that cannot make its request (as `HTTPBookingService` when a
/// request cannot be encoded): it throws ``BookingError/invalidRequest(_:)`` and counts the calls.
actor UnmakeableRequestBookingService: BookingService {
    private(set) var calls = 0

    func book(_ request: BookingRequest, idempotencyKey: String) async throws(BookingError) -> String {
        calls += 1
        throw .invalidRequest("the booking request could not be encoded: a test's reason")
    }

    func cancel(reservationID: String, idempotencyKey: String) async throws(BookingError) {
        calls += 1
        throw .invalidRequest("the cancellation could not be made: a test's reason")
    }

    func resolve(idempotencyKey: String) async throws(BookingError) -> BookingResolution {
        .nothingDone("nothing was asked")
    }
}

/// A call the adapter cannot make is its own fault, not the service's refusal: tried once,
/// the reservation ends failed with the reason, and an `ErrorRaised` says so.
@Suite(.timeLimit(.minutes(2)))
struct BookingRequestInvalidTests {
    @Test func aRequestThatCannotBeMadeFailsTheReservationOnceWithAnError() async throws {
        let service = UnmakeableRequestBookingService()
        let reservations = ReservationsModule.make()
        let deployment = try await TestDeployment.inProcess(
            modules: [reservations],
            services: [
                { client in
                    BookingAdapterService(
                        service: service, client: client, snapshots: InMemorySnapshotStore(),
                        configuration: BookingAdapterServiceTests.configuration(), logger: TestLogging.logger("booking")
                    )
                }
            ], logger: TestLogging.logger("deployment"))
        let events = try await deployment.run { deployment in
            let fixture = deployment.fixture(router: ModuleRegistry([reservations]).router)
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
                        fields: .object([("code", .string("booking-request-invalid")), ("module", .string("booking"))])),
                ])
        }
        let failed = try #require(
            events.lazy.compactMap { try? $0.payload(as: Bureau_Booking_ReservationFailed.self) }.first)
        #expect(failed.reason == "the booking request could not be encoded: a test's reason")
        let raised = try #require(events.lazy.compactMap { try? $0.payload(as: Bureau_System_ErrorRaised.self) }.first)
        #expect(raised.message == "\(failed.reservationID): \(failed.reason)")
        #expect(await service.calls == 1, "not retried: it would fail the same way")
    }
}
