import BureauSchemas

/// Reservations as the tests that sit past the reservations reducer receive them (the booking
/// adapter's, a PostgreSQL failover's).
public enum ReservationFixtures {
    /// 500.00 EUR at 1.0832 to USD, no commission: what the reservations reducer accepts.
    public static func accepted(_ id: String, amount: String = "500.00") -> Bureau_Reservations_ReservationAcceptedV2 {
        var accepted = Bureau_Reservations_ReservationAcceptedV2()
        accepted.reservationID = id
        accepted.base = "EUR"
        accepted.quote = "USD"
        accepted.amount = amount
        accepted.rate = "1.0832"
        accepted.grossAmount = "541.60"
        accepted.netAmount = "541.60"
        return accepted
    }
}
