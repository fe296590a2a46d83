import Foundation
import Guards

/// Why a booking call failed, and so what may be done next.
public enum BookingError: Error, Equatable, CustomStringConvertible {
    /// The call was not done, and sending it again is safe: there was no connection, or the
    /// service answered that it did nothing (503, 429, 408).
    case transient(String)
    /// Not worth retrying: the service refused the request (a 4xx), with its reason.
    case refused(String)
    /// The call may or may not have been done: it timed out or lost its connection after the
    /// request was sent, or its answer could not be read (over the size limit, not what the
    /// service answers, a 5xx other than 503). Only the service knows: ask it with
    /// ``BookingService/resolve(idempotencyKey:)`` before recording anything.
    case unknown(String)
    /// The call could not be made on this side (its request could not be built): nothing was
    /// sent, and sending it again would fail the same way. The adapter's fault, not the
    /// service's refusal.
    case invalidRequest(String)

    public var description: String {
        switch self {
        case .transient(let reason), .refused(let reason), .unknown(let reason), .invalidRequest(let reason): reason
        }
    }
}
