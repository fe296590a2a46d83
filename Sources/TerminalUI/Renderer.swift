/// Turns frames (cell buffers) into the bytes a terminal needs: on the first frame, after a
/// resize or after ``invalidate()`` the whole screen, otherwise only the cells that changed.
///
/// It assumes it owns the screen between frames; anything else written to the terminal
/// (a child process, a stray print) needs an ``invalidate()`` to be painted over.
public struct Renderer: Sendable {
    public let colorMode: ColorMode
    private var previous: CellBuffer?

    public init(colorMode: ColorMode) {
        self.colorMode = colorMode
    }

    /// Forgets the previous frame, so the next one is drawn in full.
    public mutating func invalidate() {
        previous = nil
    }

    /// The bytes that bring the terminal from the previous frame to `frame`.
    public mutating func render(_ frame: CellBuffer) -> [UInt8] {
        defer { previous = frame }
        guard let previous, previous.width == frame.width, previous.height == frame.height else {
            return Self.fullRedraw(frame, colorMode: colorMode)
        }
        var output = Output(colorMode: colorMode)
        for row in 0..<frame.height {
            var column = 0
            while column < frame.width {
                let cell = frame[column, row]
                let width = max(1, Int(cell.width))
                if cell.isContinuation {
                    column += 1
                    continue
                }
                var changed = cell != previous[column, row]
                if width == 2 { changed = changed || frame[column + 1, row] != previous[column + 1, row] }
                if changed { output.put(cell, x: column, y: row) }
                column += width
            }
        }
        output.finish()
        return output.bytes
    }

    /// Every cell of `frame`, after clearing the screen.
    public static func fullRedraw(_ frame: CellBuffer, colorMode: ColorMode) -> [UInt8] {
        var output = Output(colorMode: colorMode)
        output.append("\u{1B}[0m\u{1B}[2J")
        for row in 0..<frame.height {
            var column = 0
            while column < frame.width {
                let cell = frame[column, row]
                if !cell.isContinuation { output.put(cell, x: column, y: row) }
                column += max(1, Int(cell.width))
            }
        }
        output.finish()
        return output.bytes
    }

    /// Accumulates escape sequences, tracking the cursor and the current style to skip what is redundant.
    struct Output {
        let colorMode: ColorMode
        var bytes: [UInt8] = []
        var cursor: (x: Int, y: Int)?
        var style: Style?

        init(colorMode: ColorMode) {
            self.colorMode = colorMode
            bytes.reserveCapacity(4096)
        }

        mutating func append(_ text: String) {
            bytes.append(contentsOf: text.utf8)
        }

        mutating func put(_ cell: Cell, x: Int, y: Int) {
            if let cursor, cursor.y == y, cursor.x < x {
                // A relative move forward on the same row is shorter than an absolute one.
                let gap = x - cursor.x
                append(gap == 1 ? "\u{1B}[C" : "\u{1B}[\(gap)C")
            } else if cursor.map({ $0.x != x || $0.y != y }) ?? true {
                append("\u{1B}[\(y + 1);\(x + 1)H")
            }
            if style != cell.style {
                append(cell.style.sequence(for: colorMode))
                style = cell.style
            }
            bytes.append(contentsOf: String(cell.character).utf8)
            // A terminal moves past a wide character by two columns; past the last column it wraps
            // unpredictably, so the cursor is then treated as unknown.
            let next = x + max(1, Int(cell.width))
            cursor = (next, y)
        }

        mutating func finish() {
            if style != nil, style != .plain, colorMode != .plain { append("\u{1B}[0m") }
        }
    }
}
