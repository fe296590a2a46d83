import ConverterFeature
import Foundation
import Money
import TerminalUI
import WatchlistFeature

/// The watchlist: each pair's rate, its change since the previous fixing, the converter's
/// amount in the pair's quote currency, and the fixing's date.
public struct WatchlistScreen: Component, Sendable {
    public var watchlist: WatchlistProjection.Value
    public var converter: ConverterProjection.Value
    public var selected: Int

    public init(watchlist: WatchlistProjection.Value, converter: ConverterProjection.Value, selected: Int) {
        self.watchlist = watchlist
        self.converter = converter
        self.selected = selected
    }

    public func draw(in buffer: inout CellBuffer, area: Rect) {
        let conversions = Dictionary(
            converter.conversions.map { ($0.pair, $0) }, uniquingKeysWith: { first, _ in first })
        let rows = watchlist.rows.map { row -> [Table.Item] in
            let converted = conversions[row.pair].flatMap { conversion in
                conversion.converted.map { "\($0) \(conversion.currency)" }
            }
            return [
                Table.Item(row.pair, .bold),
                Table.Item(row.rate ?? "—"),
                Self.change(row),
                Table.Item(converted ?? "—"),
                Table.Item(row.asOf ?? "—", Theme.muted),
            ]
        }
        let table = Table(
            columns: [
                .init("Pair", width: 9), .init("Rate", width: 12, alignRight: true), .init("Change", width: 14),
                .init("\(converter.amount) →", width: 22, alignRight: true), .init("As of", width: 10),
            ],
            rows: rows, selected: rows.isEmpty ? nil : min(selected, rows.count - 1),
            empty: "No pairs yet: press a to add one.")
        table.draw(in: &buffer, area: area)
    }

    /// The arrow and the difference from the previous fixing, coloured by direction.
    static func change(_ row: WatchlistProjection.Value.Row) -> Table.Item {
        let difference: String
        if let now = row.rate.flatMap({ try? DecimalText.parse($0).value }),
            let then = row.previousRate.flatMap({ try? DecimalText.parse($0).value })
        {
            let delta = now - then
            difference = (delta > 0 ? "+" : "") + DecimalText.plain(delta)
        } else {
            difference = ""
        }
        switch row.change {
        case .up: return Table.Item("▲ \(difference)", Theme.up)
        case .down: return Table.Item("▼ \(difference)", Theme.down)
        case .same: return Table.Item("= 0", Theme.muted)
        case .new: return Table.Item("· new", Theme.muted)
        }
    }
}
