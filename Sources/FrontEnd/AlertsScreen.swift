import AlertsFeature
import TerminalUI

/// The alerts and their thresholds; a triggered alert is drawn in alarm colours and marked "‼".
public struct AlertsScreen: Component, Sendable {
    public var alerts: AlertsProjection.Value
    public var selected: Int

    public init(alerts: AlertsProjection.Value, selected: Int) {
        self.alerts = alerts
        self.selected = selected
    }

    public func draw(in buffer: inout CellBuffer, area: Rect) {
        let rows = alerts.alerts.map { row -> [Table.Item] in
            let state =
                row.triggered
                ? Table.Item("‼ TRIGGERED", Theme.triggered) : Table.Item("armed", Theme.muted)
            let style = row.triggered ? Style.bold : Style.plain
            return [
                Table.Item(row.id, .bold), Table.Item(row.pair, style), Table.Item(row.condition, style), state,
                Table.Item(row.lastRate ?? "—"), Table.Item(row.asOf ?? "—", Theme.muted),
            ]
        }
        Table(
            columns: [
                .init("Id", width: 7), .init("Pair", width: 8), .init("Condition", width: 12),
                .init("State", width: 12), .init("Rate", width: 10, alignRight: true), .init("As of", width: 10),
            ],
            rows: rows, selected: rows.isEmpty ? nil : min(selected, rows.count - 1),
            empty: "No alerts: press s to set one."
        ).draw(in: &buffer, area: area)
    }
}
