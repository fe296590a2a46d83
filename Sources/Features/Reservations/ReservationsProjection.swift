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
        /// How it was decided.
        public var basis: CommissionBasis
        /// The basis in words: its rate ("0.5 %"), "none: no rate set for USD", or "none:
        /// accepted before commissions" for a reservation from before Bureau charged them.
        public var commissionBasis: String { basis.description }
        /// What the person receives: the gross amount less the commission.
        public var netAmount: String
        /// pending, unknown (the booking adapter is asking the booking service what its call
        /// did), confirmed, failed, cancelling or cancelled.
        public var status: String
        public var detail: String
        /// The booking service's confirmation code, once confirmed.
        public var code = ""

        private enum CodingKeys: String, CodingKey {
            case id, pair, amount, rate, quoteAmount, commission, commissionBasis, netAmount, status, detail, code
        }

        /// The basis as its words, as `bureau show --json` has always written it.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(pair, forKey: .pair)
            try container.encode(amount, forKey: .amount)
            try container.encode(rate, forKey: .rate)
            try container.encode(quoteAmount, forKey: .quoteAmount)
            try container.encode(commission, forKey: .commission)
            try container.encode(commissionBasis, forKey: .commissionBasis)
            try container.encode(netAmount, forKey: .netAmount)
            try container.encode(status, forKey: .status)
            try container.encode(detail, forKey: .detail)
            try container.encode(code, forKey: .code)
        }
    }

    /// How a reservation's commission was decided.
    public enum CommissionBasis: Sendable, Equatable, CustomStringConvertible {
        /// The schedule's rate for the currency sold, as a percentage: "0.5 %" ("0 %" if the
        /// schedule held rates for other currencies only).
        case rate(String)
        /// No commission rate had been set when it was accepted: none was charged on `currency`.
        case noRate(currency: String)
        /// Accepted before Bureau charged commissions (stored as a `ReservationAccepted`): none.
        case beforeCommissions

        public var description: String {
            switch self {
            case .rate(let percentage): percentage
            case .noRate(let currency): "none: no rate set for \(currency)"
            case .beforeCommissions: "none: accepted before commissions"
            }
        }
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
                    commission: "\(accepted.commission) \(accepted.quote)", basis: Self.basis(of: accepted, in: event),
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

    /// How a reservation's commission was decided: by its stored type first (one stored as a
    /// `ReservationAccepted` was accepted before commissions, whatever its upcaster says of the
    /// rate), then by its basis: `BEFORE_COMMISSIONS` stored in a `ReservationAcceptedV2` is a
    /// reservation accepted while no rate had been set.
    static func basis(of accepted: ReservationAcceptedV2, in event: StoredEvent) -> CommissionBasis {
        if case .upcast(let storedType, _) = event.upcast, storedType == ReservationAccepted.protoMessageName {
            return .beforeCommissions
        }
        switch accepted.commissionBasis {
        case .beforeCommissions: return .noRate(currency: accepted.quote)
        default:
            guard let rate = Decimal(string: accepted.commissionRate, locale: Locale(identifier: "en_US_POSIX")) else {
                return .rate(accepted.commissionRate)
            }
            return .rate("\(rate * 100) %")
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
            .map(Self.shown).joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
