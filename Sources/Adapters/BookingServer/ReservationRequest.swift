import Foundation
import Hummingbird
import Logging

/// What a client sends to book.
public struct ReservationRequest: Codable, Sendable, Equatable {
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

    /// The first field that is not acceptable, and why.
    var problem: (field: String, message: String)? {
        if reservationId.isEmpty { return ("reservationId", "reservationId is empty") }
        for (field, value) in [("base", base), ("quote", quote)]
        where value.count != 3 || !value.allSatisfy({ $0.isUppercase && $0.isLetter }) {
            return (field, "\(field) '\(value)' is not a three-letter currency code")
        }
        for (field, value) in [("amount", amount), ("rate", rate), ("quoteAmount", quoteAmount)] {
            guard let number = Decimal(string: value, locale: Locale(identifier: "en_US_POSIX")), number > 0,
                value.allSatisfy({ $0.isNumber || $0 == "." })
            else { return (field, "\(field) '\(value)' is not a positive decimal") }
        }
        return nil
    }
}
