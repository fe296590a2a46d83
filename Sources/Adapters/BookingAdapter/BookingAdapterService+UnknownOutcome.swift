import BureauSchemas
import Bus
import EventLog
import Foundation
import Guards
import Logging
import Runtime
import ServiceLifecycle
import Synchronization

/// A call whose outcome is unknown (it timed out, its connection broke, its answer could not be
/// read): the reservation is told so, the service is asked what it did with the key until it
/// says, and a booking made for a reservation that was meanwhile given up is undone.
extension BookingAdapterService {
    /// Publishes that the call's outcome is unknown, so that the reservation says so while it
    /// is resolved; false if the adapter is stopping. A marker the bus refuses or cannot take
    /// is logged and the resolving goes on: it is what the reservation waits for.
    func publishUnknown(_ work: Work, reason: String) async -> Bool {
        var marker = Bureau_Booking_BookingOutcomeUnknown()
        marker.reservationID = work.reservationID
        marker.reason = EventText.bounded(reason)
        switch work.kind {
        case .book: marker.call = .booking
        case .cancel: marker.call = .cancellation
        }
        do {
            let event = try Emitted(marker).outgoing(
                id: work.unknownID, module: Self.module, causation: work.position, correlation: work.correlation)
            if case .rejected(let refusal) = try await client.publish(Self.traced([event])).first {
                logger.error(
                    "the bus refused BookingOutcomeUnknown",
                    metadata: ["booking.reservation": "\(work.reservationID)", "booking.reason": "\(refusal)"])
            }
        } catch {
            if Task.isCancelled { return false }
            logger.error(
                "could not publish BookingOutcomeUnknown",
                metadata: ["booking.reservation": "\(work.reservationID)", "booking.error": "\(error)"])
        }
        return true
    }

    /// Asks the service what the call under the work's key did, after a backoff (capped at
    /// its maximum) while it cannot say, until it does: there is no giving up, since any
    /// outcome but the service's would be a guess. Returns the outcome the answer gives; nil
    /// if the adapter is stopping.
    func resolve(_ work: Work, reason: String) async -> Emitted? {
        await retrying { (attempt: Int) -> Attempt<Emitted> in
            let began = ContinuousClock.now
            defer { metrics.called("resolve", took: .now - began) }
            do throws(BookingError) {
                switch try await service.resolve(idempotencyKey: work.key) {
                case .done(let code, _):
                    switch work.kind {
                    case .book: return .done(confirmed(work, code: code))
                    case .cancel: return .done(cancelled(work))
                    }
                case .nothingDone(let answer):
                    let verb =
                        switch work.kind {
                        case .book: "book"
                        case .cancel: "cancel"
                        }
                    return .done(
                        failure(
                            of: work,
                            reason:
                                "the booking service did not \(verb) it: the call's outcome was unknown (\(reason)), and the service answered: \(answer)"
                        ))
                }
            } catch {
                statistics.resolveRetried()
                warnRetrying(
                    "could not resolve a booking call; asking again", work, attempt: attempt, reason: "\(error)")
                return .again
            }
        }
    }

    /// Publishes the outcome, again after a backoff while the bus refuses it, up to
    /// ``Configuration/maxAttempts`` times; returns nil once it is in, or the last refusal.
    /// Throws if the bus cannot be reached or the adapter is stopping.
    func publishRetryingRefusals(
        _ outcome: Emitted, _ raised: ErrorReport?, of work: Work
    ) async throws -> String? {
        let refusal: String?? = try await retrying { (attempt: Int) async throws -> Attempt<String?> in
            guard case .rejected(let reason) = try await publish(outcome, raised, of: work, errorIndex: 1) else {
                return .done(nil)
            }
            return attempt < configuration.maxAttempts ? .again : .done(reason)
        }
        guard let refusal else { throw CancellationError() }
        return refusal
    }

    /// Cancels at the booking service a booking whose confirmation the bus refused (with its
    /// own idempotency key, so a restart repeats it safely); returns what became of it, as a
    /// clause for the failure's reason.
    func undoBooking(of work: Work) async -> String {
        let key = work.key + "/undo"
        let undone = await retrying { (attempt: Int) -> Attempt<String> in
            do throws(BookingError) {
                try await service.cancel(reservationID: work.reservationID, idempotencyKey: key)
                return .done("the booking was cancelled at the booking service")
            } catch {
                switch error {
                case .refused(let reason):
                    return .done("the booking service would not cancel the booking: \(reason)")
                case .invalidRequest(let reason):
                    return .done("the booking service could not be asked to cancel the booking: \(reason)")
                case .transient(let reason), .unknown(let reason):
                    // Sending the same key again is safe either way: it cancels once.
                    guard attempt < configuration.maxAttempts else {
                        if case .unknown = error {
                            return .done(
                                "whether the booking was cancelled at the booking service is not known: \(reason)")
                        }
                        return .done("the booking could not be cancelled at the booking service: \(reason)")
                    }
                    return .again
                }
            }
        }
        return undone ?? "the booking was not cancelled at the booking service: the adapter is stopping"
    }
}
