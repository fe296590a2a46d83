import TerminalUI

/// The `:` command line on the request line, with completions listed above it.
public struct CommandLineView: Component, Sendable {
    public var field: TextField
    public var completions: [String]

    public init(field: TextField, completions: [String]) {
        self.field = field
        self.completions = completions
    }

    /// Draws the line into `area` (one row) and the completions in the rows above it.
    public func draw(in buffer: inout CellBuffer, area: Rect) {
        let line = Rect(x: area.x, y: area.maxY - 1, width: area.width, height: 1)
        buffer.fill(line)
        buffer.write(":" + field.text + "▏", x: line.x, y: line.y, style: .bold, clip: line)
        guard !completions.isEmpty else { return }
        let shown = completions.prefix(8)
        let box = Rect(x: area.x, y: line.y - shown.count - 2, width: min(area.width, 64), height: shown.count + 2)
        buffer.fill(box)
        buffer.box(box, title: "Tab: \(completions.count) completions", style: Theme.overlay)
        for (offset, completion) in shown.enumerated() {
            buffer.write(" " + completion, x: box.x + 1, y: box.y + 1 + offset, clip: box.inset(by: 1))
        }
    }
}
