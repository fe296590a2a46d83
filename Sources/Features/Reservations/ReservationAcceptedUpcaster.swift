import BureauSchemas
import Bus
import Money

/// Reads a reservation accepted before Bureau charged commissions (`ReservationAccepted`) as
/// today's `ReservationAcceptedV2`: its quote amount is the gross and the net amount, its
/// commission zero in the quote currency's minor units, at a rate of zero, and its basis
/// ``ReservationAcceptedV2/CommissionBasis/beforeCommissions``: none charged, no rate set, which is
/// what today's reducer computes for the same request before a first rate is set (so `replay
/// --verify` of an old log agrees). That it was accepted before commissions is what the event says of itself:
/// read through this upcaster, its ``StoredEvent/upcast`` names the old type, and the read
/// models say "accepted before commissions".
public struct ReservationAcceptedUpcaster: Upcaster {
    public init() {}

    public var change: String {
        "a reservation carries its commission (gross, commission, net); one accepted before commissions carries none"
    }

    public func upcast(_ old: ReservationAccepted, of event: StoredEvent) throws -> ReservationAcceptedV2 {
        var new = ReservationAcceptedV2()
        new.reservationID = old.reservationID
        new.base = old.base
        new.quote = old.quote
        new.amount = old.amount
        new.rate = old.rate
        new.grossAmount = old.quoteAmount
        new.netAmount = old.quoteAmount
        new.commissionRate = "0"
        // Zero as the quote currency writes it ("0.00", "0" for yen); plain for one Bureau does not know.
        new.commission = Currency(old.quote).map { Money(rounding: 0, currency: $0).text } ?? "0"
        new.asOf = old.asOf
        new.commissionBasis = .beforeCommissions
        return new
    }
}
