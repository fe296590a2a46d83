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

/// A booking service whose confirmation code is larger than an envelope may be: the bus
/// refuses the `ReservationConfirmed` that carries it. It records the cancellations asked of it.
actor OversizedCodeBookingService: BookingService {
    private(set) var calls = 0
    private(set) var cancellations: [(reservationID: String, key: String)] = []

    func book(_ request: BookingRequest, idempotencyKey: String) async throws(BookingError) -> String {
        calls += 1
        return String(repeating: "C", count: (1 << 20) + 100)
    }

    func cancel(reservationID: String, idempotencyKey: String) async throws(BookingError) {
        cancellations.append((reservationID, idempotencyKey))
    }

    func resolve(idempotencyKey: String) async throws(BookingError) -> BookingResolution {
        .done(confirmationCode: String(repeating: "C", count: (1 << 20) + 100), status: "confirmed")
    }
}

/// An outcome the bus refuses is not taken as published: after the same attempts as a call,
/// the booking is undone, the reservation ends failed with the bus's reason, and an
/// `ErrorRaised` says so; nothing stays pending.
@Suite(.timeLimit(.minutes(2)))
struct BookingOutcomeRefusalTests {
    @Test func aRefusedConfirmationEndsTheReservationFailedWithAnError() async throws {
        let service = OversizedCodeBookingService()
        // A generous wait: the adapter tries the refused publish max-attempts times with its
        // backoff first, and a loaded machine is slow to get through them.
        let events = try await BookingAdapterServiceTests.reservationThatFails(
            with: service, raising: "outcome-refused", within: .seconds(60))
        let failed = try #require(
            events.lazy.compactMap { try? $0.payload(as: Bureau_Booking_ReservationFailed.self) }.first)
        #expect(failed.reason.hasPrefix("the bus refused bureau.booking.ReservationConfirmed: "), "\(failed.reason)")
        // The booking it could not record is undone, so that the service matches the log.
        #expect(failed.reason.hasSuffix("; the booking was cancelled at the booking service"), "\(failed.reason)")
        let cancellations = await service.cancellations
        #expect(cancellations.map(\.reservationID) == [failed.reservationID])
        #expect(cancellations.allSatisfy { $0.key.hasSuffix("/undo") })
        let raised = try #require(events.lazy.compactMap { try? $0.payload(as: Bureau_System_ErrorRaised.self) }.first)
        #expect(raised.message.contains(failed.reservationID) && raised.message.contains("the bus refused"))
        // The read model a person looks at: failed, not pending.
        let fold = try #require(ReservationsModule.make().projections.first { $0.name == "reservations" }).fold()
        for event in events { fold.apply(event) }
        let shown = try fold.json()
        #expect(shown.contains("\"status\" : \"failed\"") && !shown.contains("\"status\" : \"pending\""), "\(shown)")
        #expect(await service.calls == 1)
    }
}
