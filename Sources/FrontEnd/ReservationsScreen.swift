import ReservationsFeature
import TerminalUI

/// The reservations, newest first, with what the person receives after the commission, the
/// commission, and the status: pending, unknown (the booking adapter is checking with the
/// booking service), confirmed, failed, cancelling or cancelled.
public struct ReservationsScreen: Component, Sendable {
    public var reservations: ReservationsProjection.Value
    public var selected: Int

    public init(reservations: ReservationsProjection.Value, selected: Int) {
        self.reservations = reservations
        self.selected = selected
    }

    public func draw(in buffer: inout CellBuffer, area: Rect) {
        let rows = reservations.reservations.map { row -> [Table.Item] in
            [
                Table.Item(row.id, .bold), Table.Item(row.pair), Table.Item(row.amount),
                Table.Item(row.rate), Table.Item(row.netAmount), Table.Item(Self.commission(row), Theme.muted),
                Self.status(row.status), Table.Item(row.detail, Theme.muted),
            ]
        }
        Table(
            columns: [
                .init("Id", width: 7), .init("Pair", width: 8), .init("Amount", width: 14, alignRight: true),
                .init("Rate", width: 9, alignRight: true), .init("Receive", width: 15, alignRight: true),
                .init("Commission", width: 14), .init("Status", width: 12), .init("Detail", width: 20),
            ],
            rows: rows, selected: rows.isEmpty ? nil : min(selected, rows.count - 1),
            empty: "No reservations: select a pair on the watchlist and press r."
        ).draw(in: &buffer, area: area)
    }

    /// The commission without its currency (Receive shows it) and its basis: "2.71 (0.5 %)";
    /// "none (no rate)" for one accepted while no commission rate was set, "none (before)" for
    /// one accepted before Bureau charged commissions.
    static func commission(_ row: ReservationsProjection.Row) -> String {
        switch row.basis {
        case .beforeCommissions:
            return "none (before)"
        case .noRate:
            return "none (no rate)"
        case .rate(let percentage):
            let amount = row.commission.split(separator: " ").first.map(String.init) ?? row.commission
            return "\(amount) (\(percentage))"
        }
    }

    static func status(_ status: String) -> Table.Item {
        switch status {
        case "confirmed": Table.Item("✓ confirmed", Theme.success)
        case "failed": Table.Item("✗ failed", Theme.error)
        case "cancelled": Table.Item("– cancelled", Theme.muted)
        case "pending", "cancelling": Table.Item("⧗ \(status)", Theme.pending)
        case "unknown": Table.Item("? unknown", Theme.pending)
        default: Table.Item(status)
        }
    }
}
