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
        let events = try await BookingAdapterServiceTests.reservationThatFails(
            with: service, raising: "booking-request-invalid")
        let failed = try #require(
            events.lazy.compactMap { try? $0.payload(as: Bureau_Booking_ReservationFailed.self) }.first)
        #expect(failed.reason == "the booking request could not be encoded: a test's reason")
        let raised = try #require(events.lazy.compactMap { try? $0.payload(as: Bureau_System_ErrorRaised.self) }.first)
        #expect(raised.message == "\(failed.reservationID): \(failed.reason)")
        #expect(await service.calls == 1, "not retried: it would fail the same way")
    }
}
