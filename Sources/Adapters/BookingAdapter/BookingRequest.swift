import Foundation
import Guards

/// A reservation as the booking service takes it.
public struct BookingRequest: Codable, Sendable, Equatable {
    public var reservationId: String
    public var base: String
    public var quote: String
    public var amount: String
    public var rate: String
    public var quoteAmount: String

    public init(reservationId: String, base: String, quote: String, amount: String, rate: String, quoteAmount: String) {
        self.reservationId = reservationId
        self.base = base
        self.quote = quote
        self.amount = amount
        self.rate = rate
        self.quoteAmount = quoteAmount
    }
}
