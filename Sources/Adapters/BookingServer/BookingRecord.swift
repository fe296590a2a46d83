import Foundation
import Hummingbird
import Logging

/// A booking as the service keeps it.
public struct BookingRecord: Codable, Sendable, Equatable {
    public var reservationId: String
    public var confirmationCode: String
    public var status: String
    public var request: ReservationRequest
}
