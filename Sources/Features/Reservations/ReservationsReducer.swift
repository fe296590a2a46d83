import BureauSchemas
import Bus
import Foundation
import Guards
import Money
import Runtime

/// Reservations: currency reserved at the rate a person was shown, and their cancellation.
///
/// A reservation exchanges `amount` of the base currency into the quote currency at the
/// quoted rate. It is accepted when the pair is in the latest rates, the amount follows the
/// base currency's rules (see `Money`), the latest rates are at most ``maxQuoteAge`` old (by
/// commit time) and the quoted rate equals the current cross rate to six significant digits.
/// The booking service then confirms or fails it; while the booking adapter does not know
/// which (its call timed out, say), the reservation is unknown, and the adapter's answer from
/// the service ends it confirmed or failed. Only a confirmed reservation can be cancelled, and
/// only once.
///
/// The bureau charges a commission on the currency it sells (the quote currency): the rate its
/// schedule holds for that currency when the request is committed (`CommissionRateSet`, asked
/// for with `bureau://reservations/commission`), on the gross amount, rounded to the quote
/// currency's minor units; the person receives the net amount. A currency without a rate is
/// charged nothing. Until a first rate is set, Bureau charges no commission at all, and a
/// reservation's basis is `BEFORE_COMMISSIONS` (none charged: no rate set): what a reservation
/// stored before commissions (a `ReservationAccepted`) reads as through
/// ``ReservationAcceptedUpcaster``, so that replaying an old log computes what it recorded. That
/// an old one was accepted before Bureau charged commissions is told by its stored type, which
/// the read models show; one accepted today is shown as "no rate set".
public struct ReservationsReducer: Reducer {
    public struct State: Codable, Equatable, Sendable {
        public var rates: ReferenceRates?
        public var ratesCommittedAt: CommitTime?
        public var reservations: [String: Reservation] = [:]
        /// The commission rate on each currency sold, a decimal fraction ("0.005" is 0.5 %); nil
        /// until a first rate is set (Bureau then charges none, and says no rate was set).
        public var commissionRates: [String: String]?

        public init() {}
    }

    public struct Reservation: Codable, Equatable, Sendable {
        public var id: String
        public var base: String
        public var quote: String
        public var amount: String
        public var rate: String
        /// The gross amount in the quote currency (amount × rate), before commission.
        public var quoteAmount: String
        public var commissionRate: String
        public var commission: String
        public var netAmount: String
        public var asOf: String
        public var status: Status
        public var confirmationCode: String?
        public var failure: String?
    }

    public enum Status: String, Codable, Sendable {
        /// Accepted; waiting for the booking service.
        case pending
        /// The booking call's outcome is unknown: the booking adapter is asking the booking
        /// service what it did.
        case unknown
        case confirmed
        case failed
        /// A cancellation is accepted; waiting for the booking service.
        case cancelling
        case cancelled
    }

    public enum Input: Sendable {
        case reservationRequested(ReservationRequested)
        case cancellationRequested(CancellationRequested)
        case ratesPublished(Bureau_Rates_RatesPublished)
        case confirmed(ReservationConfirmed)
        case failed(ReservationFailed)
        case cancelled(ReservationCancelled)
        case cancellationFailed(CancellationFailed)
        case outcomeUnknown(BookingOutcomeUnknown)
        case commissionRateSetRequested(CommissionRateSetRequested)
    }

    /// The largest commission rate the schedule takes: a tenth of what is sold.
    public static let maxCommissionRate: Decimal = 0.1

    /// The oldest rates a quote may come from, by the commit times of the rates and the
    /// request: four days, so that quotes stay valid over a weekend and a holiday, when the
    /// ECB publishes nothing.
    public let maxQuoteAge: Duration

    public init(maxQuoteAge: Duration = .seconds(4 * 24 * 3600)) {
        self.maxQuoteAge = maxQuoteAge
    }

    public var module: String { "reservations" }
    /// 2: reservations carry their commission, and the state the commission schedule.
    public var stateVersion: Int { 2 }
    public var initialState: State { State() }

    public var inputs: InputDecoder<Input> { Self.inputDecoder }

    /// Built once: a host decodes every event with it.
    private static let inputDecoder: InputDecoder<Input> = {
        InputDecoder()
            .on(ReservationRequested.self, Input.reservationRequested)
            .on(CancellationRequested.self, Input.cancellationRequested)
            .on(Bureau_Rates_RatesPublished.self, Input.ratesPublished)
            .on(ReservationConfirmed.self, Input.confirmed)
            .on(ReservationFailed.self, Input.failed)
            .on(ReservationCancelled.self, Input.cancelled)
            .on(CancellationFailed.self, Input.cancellationFailed)
            .on(BookingOutcomeUnknown.self, Input.outcomeUnknown)
            .on(CommissionRateSetRequested.self, Input.commissionRateSetRequested)
    }()

    public var outputTypes: [String] { Self.outputs }

    private static let outputs: [String] = {
        [
            ReservationAcceptedV2.protoMessageName, ReservationRejected.protoMessageName,
            CancellationAccepted.protoMessageName, CancellationRejected.protoMessageName,
            CommissionRateSet.protoMessageName, CommissionRateRejected.protoMessageName,
        ]
    }()

    public func reduce(state: inout State, input: Envelope<Input>) -> [Emitted] {
        switch input.payload {
        case .ratesPublished(let published):
            state.rates = ReferenceRates(published)
            state.ratesCommittedAt = input.commitTime
            return []

        case .reservationRequested(let request):
            switch decide(request, at: input, in: state) {
            case .reject(let rejection):
                return [Emitted(rejection)]
            case .accept(let reservation):
                state.reservations[reservation.id] = reservation
                return [
                    Emitted(
                        Self.accepted(reservation, basis: state.commissionRates == nil ? .beforeCommissions : .schedule)
                    )
                ]
            }
        case .commissionRateSetRequested(let request):
            return [setCommissionRate(request, in: &state)]
        case .cancellationRequested(let request):
            return [cancel(request, in: &state)]

        case .outcomeUnknown(let unknown):
            // A cancellation whose outcome is unknown stays cancelling: it is still under way.
            if unknown.call == .booking {
                update(&state, unknown.reservationID, from: [.pending]) { $0.status = .unknown }
            }
            return []
        case .confirmed(let confirmed):
            update(&state, confirmed.reservationID, from: [.pending, .unknown]) {
                $0.status = .confirmed
                $0.confirmationCode = confirmed.confirmationCode
            }
            return []
        case .failed(let failed):
            update(&state, failed.reservationID, from: [.pending, .unknown]) {
                $0.status = .failed
                $0.failure = failed.reason
            }
            return []
        case .cancelled(let cancelled):
            update(&state, cancelled.reservationID, from: [.cancelling]) { $0.status = .cancelled }
            return []
        case .cancellationFailed(let failed):
            // The booking service kept the reservation: it is confirmed, and may be cancelled again.
            update(&state, failed.reservationID, from: [.cancelling]) {
                $0.status = .confirmed
                $0.failure = failed.reason
            }
            return []
        }
    }

    /// The event that says `reservation` is taken, at the commission `basis` it was priced on.
    private static func accepted(
        _ reservation: Reservation, basis: ReservationAcceptedV2.CommissionBasis
    ) -> ReservationAcceptedV2 {
        var accepted = ReservationAcceptedV2()
        accepted.reservationID = reservation.id
        accepted.base = reservation.base
        accepted.quote = reservation.quote
        accepted.amount = reservation.amount
        accepted.rate = reservation.rate
        accepted.grossAmount = reservation.quoteAmount
        accepted.commissionRate = reservation.commissionRate
        accepted.commission = reservation.commission
        accepted.netAmount = reservation.netAmount
        accepted.asOf = reservation.asOf
        accepted.commissionBasis = basis
        return accepted
    }

    /// A commission rate for a currency: a known currency and a fraction from 0 to the maximum,
    /// set again over any before it.
    private func setCommissionRate(_ request: CommissionRateSetRequested, in state: inout State) -> Emitted {
        guard let currency = Currency(request.currency) else {
            return Emitted(
                CommissionRateRejected(request, message: "'\(request.currency)' is not a currency Bureau knows"))
        }
        guard let rate = try? DecimalText.parse(request.rate).value, rate >= 0, rate <= Self.maxCommissionRate else {
            return Emitted(
                CommissionRateRejected(
                    request,
                    message:
                        "'\(request.rate)' is not a commission rate: give a decimal fraction from 0 to "
                        + "\(DecimalText.plain(Self.maxCommissionRate)), e.g. 0.005 for 0.5 %"))
        }
        let text = DecimalText.plain(rate)
        state.commissionRates = (state.commissionRates ?? [:]).merging([currency.code: text]) { $1 }
        return Emitted(CommissionRateSet(currency: currency.code, rate: text))
    }

    /// The cancellation policy: only a confirmed reservation can be cancelled; it is then
    /// cancelling until the booking service answers.
    private func cancel(_ request: CancellationRequested, in state: inout State) -> Emitted {
        let id = request.reservationID.uppercased()
        guard var reservation = state.reservations[id] else {
            return Emitted(
                CancellationRejected(
                    reservationID: request.reservationID, reason: .notFound,
                    message: "no reservation has the id \(request.reservationID)"))
        }
        switch reservation.status {
        case .confirmed:
            reservation.status = .cancelling
            state.reservations[id] = reservation
            return Emitted(CancellationAccepted(reservationID: id))
        case .pending, .failed:
            return Emitted(
                CancellationRejected(
                    reservationID: id, reason: .notConfirmed,
                    message:
                        "\(id) is \(reservation.status.rawValue), not confirmed; only a confirmed reservation can be cancelled"
                ))
        case .unknown:
            return Emitted(
                CancellationRejected(
                    reservationID: id, reason: .notConfirmed,
                    message:
                        "\(id) is not confirmed yet: the booking service is being asked whether it booked it; only a confirmed reservation can be cancelled"
                ))
        case .cancelling, .cancelled:
            return Emitted(
                CancellationRejected(
                    reservationID: id, reason: .alreadyCancelled,
                    message: "\(id) is already \(reservation.status == .cancelled ? "cancelled" : "being cancelled")"))
        }
    }

    private func update(
        _ state: inout State, _ id: String, from statuses: Set<Status>, _ change: (inout Reservation) -> Void
    ) {
        guard var reservation = state.reservations[id], statuses.contains(reservation.status) else { return }
        change(&reservation)
        state.reservations[id] = reservation
    }

    private enum Decision {
        case accept(Reservation)
        case reject(ReservationRejected)
    }

    /// The reservation `request` makes, or why it is refused.
    private func decide(_ request: ReservationRequested, at input: Envelope<Input>, in state: State) -> Decision {
        let pair = "\(request.base.uppercased())/\(request.quote.uppercased())"
        guard let rates = state.rates else {
            return .reject(.init(request, reason: .unknownPair, message: "no rates have been published yet"))
        }
        guard let base = Currency(request.base), let quote = Currency(request.quote),
            rates.currencies.contains(base), rates.currencies.contains(quote)
        else {
            return .reject(
                .init(request, reason: .unknownPair, message: "\(pair) is not in the rates of \(rates.asOf)"))
        }
        guard base != quote else {
            return .reject(
                .init(request, reason: .unknownPair, message: "\(pair): base and quote are the same currency"))
        }
        let amount: Money
        do {
            amount = try Money(parsing: request.amount, currency: base)
        } catch {
            return .reject(.init(request, reason: .badAmount, message: error.description))
        }
        // A rate that is not a number is no quote this bureau gave: the schema's STALE_QUOTE. The
        // message is part of the recorded outputs that `replay --verify` compares, so it stays as
        // logs hold it; the rate it quotes says what was wrong.
        guard let quoted = try? DecimalText.parse(request.rate).value else {
            return .reject(.init(request, reason: .staleQuote, message: "'\(request.rate)' is not a rate"))
        }
        if let committed = state.ratesCommittedAt, input.commitTime - committed > maxQuoteAge {
            return .reject(
                .init(
                    request, reason: .staleQuote,
                    message:
                        "the rates of \(rates.asOf) are older than \(maxQuoteAge.inWholeSeconds / 3600) hours"
                ))
        }
        guard let current = rates.quote(from: base, to: quote) else {
            return .reject(.init(request, reason: .unknownPair, message: "\(pair) has no rate"))
        }
        guard quoted == current else {
            return .reject(
                .init(
                    request, reason: .staleQuote,
                    message:
                        "\(pair) is now \(DecimalText.plain(current)) (rates of \(rates.asOf)), not \(request.rate)"))
        }
        let gross = Money(rounding: amount.amount * quoted, currency: quote)
        var rate: Decimal = 0
        if let stored = state.commissionRates?[quote.code] {
            // Written by this reducer from a parsed rate; one that does not parse (a state from
            // elsewhere) is said, never taken for no commission.
            guard let parsed = try? DecimalText.parse(stored).value else {
                return .reject(
                    .init(
                        request, reason: .unspecified,
                        message: "the commission rate kept for \(quote.code), '\(stored)', is not a number"))
            }
            rate = parsed
        }
        let commission = Money(rounding: gross.amount * rate, currency: quote)
        let net = Money(rounding: gross.amount - commission.amount, currency: quote)
        return .accept(
            Reservation(
                id: "R\(input.position)", base: base.code, quote: quote.code, amount: amount.text,
                rate: DecimalText.plain(current), quoteAmount: gross.text, commissionRate: DecimalText.plain(rate),
                commission: commission.text, netAmount: net.text, asOf: rates.asOf, status: .pending))
    }
}
