import TerminalUI

/// The keys, in a box over the screen: ``KeyBindings``' rows, the keys column as wide as its
/// widest entry.
public struct HelpView: Component, Sendable {
    public init() {}

    public func draw(in buffer: inout CellBuffer, area: Rect) {
        let rows = KeyBindings.all
        let keysWidth = rows.map { DisplayWidth.of($0.keys) }.max() ?? 0
        let helpWidth = rows.map { DisplayWidth.of($0.help) }.max() ?? 0
        // Borders, a space each side, and two spaces between the columns.
        let box = area.centered(width: keysWidth + helpWidth + 6, height: rows.count + 2)
        buffer.fill(box)
        buffer.box(box, title: "Keys", footer: "any key closes", style: Theme.overlay)
        let inner = box.inset(by: 1)
        for (offset, binding) in rows.enumerated() {
            let y = inner.y + offset
            buffer.write(
                " " + DisplayWidth.fit(binding.keys, to: keysWidth), x: inner.x, y: y, style: .bold, clip: inner)
            buffer.write(binding.help, x: inner.x + keysWidth + 3, y: y, clip: inner)
        }
    }
}
