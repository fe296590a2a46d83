import BureauSchemas

public typealias ReservationRequested = Bureau_Reservations_ReservationRequested
/// The shape of an accepted reservation before commissions: read as a ``ReservationAcceptedV2``
/// (``ReservationAcceptedUpcaster``); nothing publishes it any more.
public typealias ReservationAccepted = Bureau_Reservations_ReservationAccepted
public typealias ReservationAcceptedV2 = Bureau_Reservations_ReservationAcceptedV2
public typealias CommissionRateSetRequested = Bureau_Reservations_CommissionRateSetRequested
public typealias CommissionRateSet = Bureau_Reservations_CommissionRateSet
public typealias CommissionRateRejected = Bureau_Reservations_CommissionRateRejected
public typealias ReservationRejected = Bureau_Reservations_ReservationRejected
public typealias CancellationRequested = Bureau_Reservations_CancellationRequested
public typealias CancellationAccepted = Bureau_Reservations_CancellationAccepted
public typealias CancellationRejected = Bureau_Reservations_CancellationRejected
public typealias ReservationConfirmed = Bureau_Booking_ReservationConfirmed
public typealias ReservationFailed = Bureau_Booking_ReservationFailed
public typealias ReservationCancelled = Bureau_Booking_ReservationCancelled
public typealias CancellationFailed = Bureau_Booking_CancellationFailed
public typealias BookingOutcomeUnknown = Bureau_Booking_BookingOutcomeUnknown

extension ReservationRequested {
    public init(base: String, quote: String, amount: String, rate: String) {
        self.init()
        self.base = base
        self.quote = quote
        self.amount = amount
        self.rate = rate
    }
}

extension ReservationRejected {
    public init(_ request: ReservationRequested, reason: Reason, message: String) {
        self.init()
        base = request.base
        quote = request.quote
        amount = request.amount
        rate = request.rate
        self.reason = reason
        self.message = message
    }
}

extension CancellationRequested {
    public init(reservationID: String) {
        self.init()
        self.reservationID = reservationID
    }
}

extension CancellationAccepted {
    public init(reservationID: String) {
        self.init()
        self.reservationID = reservationID
    }
}

extension CancellationRejected {
    public init(reservationID: String, reason: Reason, message: String) {
        self.init()
        self.reservationID = reservationID
        self.reason = reason
        self.message = message
    }
}

extension ReservationConfirmed {
    public init(reservationID: String, confirmationCode: String) {
        self.init()
        self.reservationID = reservationID
        self.confirmationCode = confirmationCode
    }
}

extension ReservationFailed {
    public init(reservationID: String, reason: String) {
        self.init()
        self.reservationID = reservationID
        self.reason = reason
    }
}

extension ReservationCancelled {
    public init(reservationID: String) {
        self.init()
        self.reservationID = reservationID
    }
}

extension CancellationFailed {
    public init(reservationID: String, reason: String) {
        self.init()
        self.reservationID = reservationID
        self.reason = reason
    }
}

extension BookingOutcomeUnknown {
    public init(reservationID: String, call: Call, reason: String) {
        self.init()
        self.reservationID = reservationID
        self.call = call
        self.reason = reason
    }
}

extension CommissionRateSetRequested {
    public init(currency: String, rate: String) {
        self.init()
        self.currency = currency
        self.rate = rate
    }
}

extension CommissionRateSet {
    public init(currency: String, rate: String) {
        self.init()
        self.currency = currency
        self.rate = rate
    }
}

extension CommissionRateRejected {
    public init(_ request: CommissionRateSetRequested, message: String) {
        self.init()
        currency = request.currency
        rate = request.rate
        self.message = message
    }
}
