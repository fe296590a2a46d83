import Foundation
import Guards

/// The booking service as the adapter sees it: the seam between the adapter and the network.
///
/// ``HTTPBookingService`` calls the HTTP API; `InMemoryBookingService`, in the adapter's
/// tests, is its twin; one contract suite runs against both. Calls carry an idempotency key: repeating a
/// call with the same key never books or cancels twice.
public protocol BookingService: Sendable {
    /// Books; returns the confirmation code.
    func book(_ request: BookingRequest, idempotencyKey: String) async throws(BookingError) -> String
    /// Cancels a booked reservation.
    func cancel(reservationID: String, idempotencyKey: String) async throws(BookingError)
    /// What the call made with `idempotencyKey` did, for a call whose outcome is
    /// ``BookingError/unknown(_:)``. When nothing was done the service closes the key, so that
    /// the answer stays true: the call, if it is still on its way, is refused when it arrives.
    /// Asking again answers the same.
    func resolve(idempotencyKey: String) async throws(BookingError) -> BookingResolution
}
