import TerminalUI

/// The keys, in a box over the screen.
public struct HelpView: Component, Sendable {
    public init() {}

    public func draw(in buffer: inout CellBuffer, area: Rect) {
        let box = area.centered(width: 76, height: KeyBindings.all.count + 2)
        buffer.fill(box)
        buffer.box(box, title: "Keys", footer: "any key closes", style: Theme.overlay)
        let inner = box.inset(by: 1)
        for (offset, binding) in KeyBindings.all.enumerated() {
            let y = inner.y + offset
            buffer.write(" " + DisplayWidth.fit(binding.keys, to: 17), x: inner.x, y: y, style: .bold, clip: inner)
            buffer.write(binding.action, x: inner.x + 19, y: y, clip: inner)
        }
    }
}
