import BureauSchemas
import Bus
import EventLog
import Foundation
import Guards
import Logging
import Runtime
import ServiceLifecycle
import Synchronization

/// What the adapter reads from the bus: the call an accepted reservation or cancellation asks for.
extension BookingAdapterService {
    /// The call `event` asks for; nil for another event, and for one of those types that cannot
    /// be read, which is counted and logged, not passed over silently: nothing will book or
    /// cancel it.
    func work(in event: StoredEvent) -> Work? {
        do {
            return try Self.work(from: event)
        } catch {
            consumer?.inputMalformed()
            logger.error(
                "an accepted reservation or cancellation cannot be read; it is not booked",
                metadata: [
                    "booking.position": "\(event.position)", "booking.type": "\(event.type)",
                    "booking.error": "\(error)",
                ])
            return nil
        }
    }

    /// The call an accepted event asks for; nil for another event; throws for one of those
    /// types that cannot be read.
    static func work(from event: StoredEvent) throws -> Work? {
        // A reservation from before commissions is read as one (its net amount its quote amount).
        if let accepted = try event.payload(as: Bureau_Reservations_ReservationAcceptedV2.self) {
            // The booking service books what the person receives: the net amount.
            let request = BookingRequest(
                reservationId: accepted.reservationID, base: accepted.base, quote: accepted.quote,
                amount: accepted.amount,
                rate: accepted.rate, quoteAmount: accepted.netAmount)
            var work = Work(
                position: event.position, eventID: event.id, correlation: event.correlation, kind: .book(request))
            work.traceParent = event.traceParent
            return work
        }
        if let accepted = try event.payload(as: Bureau_Reservations_CancellationAccepted.self) {
            var work = Work(
                position: event.position, eventID: event.id, correlation: event.correlation,
                kind: .cancel(reservationID: accepted.reservationID))
            work.traceParent = event.traceParent
            return work
        }
        return nil
    }
}
