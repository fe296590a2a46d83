/// A virtual screen: a grid of cells that components draw into and the renderer compares.
///
/// Drawing is clipped to the buffer and to the rectangle given; a wide character that does
/// not fit in the space left is replaced by a space rather than cut in half.
public struct CellBuffer: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public private(set) var cells: [Cell]

    public init(width: Int, height: Int) {
        self.width = max(0, width)
        self.height = max(0, height)
        cells = Array(repeating: .blank, count: self.width * self.height)
    }

    public var bounds: Rect { Rect(x: 0, y: 0, width: width, height: height) }

    public subscript(x: Int, y: Int) -> Cell {
        guard x >= 0, y >= 0, x < width, y < height else { return .blank }
        return cells[y * width + x]
    }

    /// Sets one cell; a write outside the buffer is ignored.
    public mutating func set(_ x: Int, _ y: Int, _ cell: Cell) {
        guard x >= 0, y >= 0, x < width, y < height else { return }
        // Overwriting half of a wide character blanks its other half, so no half is left dangling.
        let index = y * width + x
        if cells[index].isContinuation, x > 0 { cells[index - 1] = Cell(" ", style: cells[index - 1].style) }
        if cells[index].width == 2, x + 1 < width { cells[index + 1] = Cell(" ", style: cells[index].style) }
        cells[index] = cell
    }

    /// Draws `text` from (x, y) in `style`, clipped to `clip` (default: the whole buffer);
    /// returns the column after the last one drawn. Control characters (C0, DEL and C1, which a
    /// terminal may take as the start of an escape sequence) are shown as "?".
    @discardableResult
    public mutating func write(
        _ text: some StringProtocol, x: Int, y: Int, style: Style = .plain, clip: Rect? = nil
    )
        -> Int
    {
        let area = clip ?? bounds
        guard y >= area.y, y < area.maxY else { return x }
        var column = x
        for character in text {
            let shown: Character =
                character.unicodeScalars.allSatisfy({ $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
                ? "?" : character
            let cell = Cell(shown, style: style)
            let columns = Int(cell.width)
            if column + columns > area.maxX {
                if column < area.maxX, column >= area.x { set(column, y, Cell(" ", style: style)) }
                return area.maxX
            }
            if column >= area.x {
                set(column, y, cell)
                if columns == 2 { set(column + 1, y, .continuation(style)) }
            }
            column += columns
        }
        return column
    }

    /// Fills a rectangle with a character in a style.
    public mutating func fill(_ rect: Rect, with character: Character = " ", style: Style = .plain) {
        let line = String(repeating: character, count: max(0, rect.width))
        for row in rect.y..<rect.maxY { write(line, x: rect.x, y: row, style: style, clip: rect) }
    }

    /// Draws a single-line box around `rect` with an optional title in the top edge.
    public mutating func box(_ rect: Rect, title: String = "", footer: String = "", style: Style = .plain) {
        guard rect.width >= 2, rect.height >= 2 else { return }
        let inner = String(repeating: "─", count: rect.width - 2)
        write("┌" + inner + "┐", x: rect.x, y: rect.y, style: style)
        for row in (rect.y + 1)..<(rect.maxY - 1) {
            write("│", x: rect.x, y: row, style: style)
            write("│", x: rect.maxX - 1, y: row, style: style)
        }
        write("└" + inner + "┘", x: rect.x, y: rect.maxY - 1, style: style)
        let edge = Rect(x: rect.x + 1, y: rect.y, width: rect.width - 2, height: rect.height)
        if !title.isEmpty {
            write(" \(title) ", x: rect.x + 1, y: rect.y, style: style.merging(bold: true), clip: edge)
        }
        if !footer.isEmpty { write(" \(footer) ", x: rect.x + 1, y: rect.maxY - 1, style: style, clip: edge) }
    }

    /// The buffer as text, one line per row with trailing spaces removed: what a snapshot holds.
    public var text: String {
        var lines: [String] = []
        for row in 0..<height {
            var line = ""
            for column in 0..<width {
                let cell = self[column, row]
                if !cell.isContinuation { line.append(cell.character) }
            }
            while line.last == " " { line.removeLast() }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}

extension Style {
    /// This style, made bold.
    public func merging(bold: Bool) -> Style {
        var copy = self
        copy.bold = copy.bold || bold
        return copy
    }
}
