import Bus
import Foundation
import Runtime

/// Every reservation with its status, as the reservations screen and `bureau show reservations` list them.
public struct ReservationsProjection: Projection {
    public struct Value: Sendable, Encodable, Equatable {
        /// Newest first.
        public var reservations: [Row] = []

        public init() {}
    }

    public struct Row: Sendable, Encodable, Equatable {
        public var id: String
        public var pair: String
        public var amount: String
        public var rate: String
        /// The gross amount in the quote currency, before commission.
        public var quoteAmount: String
        /// The commission, in the quote currency: "2.71 USD".
        public var commission: String
        /// How it was decided: its rate ("0.5 %"), or "none: accepted before commissions" for a
        /// reservation from before Bureau charged them.
        public var commissionBasis: String
        /// What the person receives: the gross amount less the commission.
        public var netAmount: String
        /// pending, unknown (the booking adapter is asking the booking service what its call
        /// did), confirmed, failed, cancelling or cancelled.
        public var status: String
        public var detail: String
        /// The booking service's confirmation code, once confirmed.
        public var code = ""
    }

    public init() {}

    public var name: String { "reservations" }
    public var inputTypes: [String] {
        [
            ReservationAcceptedV2.protoMessageName, ReservationConfirmed.protoMessageName,
            ReservationFailed.protoMessageName, CancellationAccepted.protoMessageName,
            ReservationCancelled.protoMessageName, CancellationFailed.protoMessageName,
            BookingOutcomeUnknown.protoMessageName,
        ]
    }
    public var initialValue: Value { Value() }

    public func apply(_ event: StoredEvent, to value: inout Value) throws {
        func update(_ id: String, _ change: (inout Row) -> Void) {
            guard let index = value.reservations.firstIndex(where: { $0.id == id }) else { return }
            change(&value.reservations[index])
        }
        if let accepted = try event.payload(as: ReservationAcceptedV2.self) {
            value.reservations.insert(
                Row(
                    id: accepted.reservationID, pair: "\(accepted.base)/\(accepted.quote)",
                    amount: "\(accepted.amount) \(accepted.base)", rate: accepted.rate,
                    quoteAmount: "\(accepted.grossAmount) \(accepted.quote)",
                    commission: "\(accepted.commission) \(accepted.quote)", commissionBasis: Self.basis(of: accepted),
                    netAmount: "\(accepted.netAmount) \(accepted.quote)", status: "pending",
                    detail: "rates of \(accepted.asOf)"), at: 0)
        } else if let unknown = try event.payload(as: BookingOutcomeUnknown.self) {
            update(unknown.reservationID) {
                switch (unknown.call, $0.status) {
                case (.booking, "pending"):
                    $0.status = "unknown"
                    $0.detail = "checking with the booking service (\(unknown.reason))"
                case (.cancellation, "cancelling"):
                    $0.status = "unknown"
                    $0.detail = "cancellation: checking with the booking service (\(unknown.reason))"
                default:
                    break
                }
            }
        } else if let confirmed = try event.payload(as: ReservationConfirmed.self) {
            update(confirmed.reservationID) {
                $0.status = "confirmed"
                $0.code = confirmed.confirmationCode
                $0.detail = "code \(confirmed.confirmationCode)"
            }
        } else if let failed = try event.payload(as: ReservationFailed.self) {
            update(failed.reservationID) {
                $0.status = "failed"
                $0.detail = failed.reason
            }
        } else if let cancelling = try event.payload(as: CancellationAccepted.self) {
            update(cancelling.reservationID) { $0.status = "cancelling" }
        } else if let cancelled = try event.payload(as: ReservationCancelled.self) {
            update(cancelled.reservationID) {
                $0.status = "cancelled"
                if !$0.code.isEmpty { $0.detail = "code \($0.code)" }
            }
        } else if let failed = try event.payload(as: CancellationFailed.self) {
            update(failed.reservationID) {
                $0.status = "confirmed"
                $0.detail = "cancellation failed: \(failed.reason)"
            }
        }
    }

    /// How a reservation's commission was decided, in words: its rate as a percentage, or that
    /// it was accepted before Bureau charged commissions.
    static func basis(of accepted: ReservationAcceptedV2) -> String {
        switch accepted.commissionBasis {
        case .beforeCommissions: return "none: accepted before commissions"
        default:
            guard let rate = Decimal(string: accepted.commissionRate, locale: Locale(identifier: "en_US_POSIX")) else {
                return accepted.commissionRate
            }
            return "\(rate * 100) %"
        }
    }

    public func render(_ value: Value) -> String {
        guard !value.reservations.isEmpty else { return "No reservations." }
        return value.reservations.map { row in
            [
                row.id, row.pair, row.amount, "@ \(row.rate)", "→ \(row.quoteAmount)",
                "− \(row.commission) (\(row.commissionBasis))",
                "= \(row.netAmount)", row.status, row.detail,
            ]
            .joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
