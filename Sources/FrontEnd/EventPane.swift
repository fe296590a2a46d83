import TerminalUI

/// The bus at work: the latest events, newest at the bottom, one line each.
public struct EventPane: Component, Sendable {
    public var lines: [EventLine]

    public init(lines: [EventLine]) {
        self.lines = lines
    }

    public func draw(in buffer: inout CellBuffer, area: Rect) {
        buffer.box(area, title: "Events", style: Theme.muted)
        let inner = area.inset(by: 1)
        guard inner.height > 0 else { return }
        let shown = lines.suffix(inner.height)
        if shown.isEmpty {
            buffer.write("waiting for events…", x: inner.x + 1, y: inner.y, style: .dim, clip: inner)
        }
        for (offset, line) in shown.enumerated() {
            let y = inner.y + offset
            var x = buffer.write(
                Table.aligned(String(line.position), 7, true), x: inner.x, y: y, style: .dim, clip: inner)
            x = buffer.write("  " + DisplayWidth.fit(line.type, to: 34), x: x, y: y, style: .bold, clip: inner)
            buffer.write("  " + line.summary, x: x, y: y, clip: inner)
        }
    }
}
