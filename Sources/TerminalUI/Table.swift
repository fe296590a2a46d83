/// Rows of text in fixed columns, with a header and an optional selected row that is drawn
/// reversed and marked with "›" (so it shows without colour too).
///
/// The last column takes the width left over. When there are more rows than room, the view
/// scrolls to keep the selected row visible.
public struct Table: Component, Sendable {
    public struct Column: Sendable {
        public var title: String
        public var width: Int
        public var alignRight: Bool

        public init(_ title: String, width: Int, alignRight: Bool = false) {
            self.title = title
            self.width = width
            self.alignRight = alignRight
        }
    }

    /// One cell of a row: its text and style.
    public struct Item: Sendable {
        public var text: String
        public var style: Style

        public init(_ text: String, _ style: Style = .plain) {
            self.text = text
            self.style = style
        }
    }

    public var columns: [Column]
    public var rows: [[Item]]
    public var selected: Int?
    /// Shown instead of the rows when there are none.
    public var empty: String

    public init(columns: [Column], rows: [[Item]], selected: Int? = nil, empty: String = "") {
        self.columns = columns
        self.rows = rows
        self.selected = selected
        self.empty = empty
    }

    public func draw(in buffer: inout CellBuffer, area: Rect) {
        guard area.height > 0 else { return }
        var x = area.x + 2
        for (index, column) in columns.enumerated() {
            let width = index == columns.count - 1 ? max(0, area.maxX - x) : column.width
            buffer.write(
                Self.aligned(column.title, width, column.alignRight), x: x, y: area.y, style: .bold, clip: area)
            x += width + 1
        }
        guard !rows.isEmpty else {
            buffer.write(empty, x: area.x + 2, y: area.y + 2, style: .dim, clip: area)
            return
        }
        let visible = max(0, area.height - 1)
        let first = max(0, min((selected ?? 0) - visible + 1, rows.count - visible))
        for (offset, row) in rows.dropFirst(first).prefix(visible).enumerated() {
            let index = first + offset
            let y = area.y + 1 + offset
            let isSelected = index == selected
            if isSelected {
                buffer.fill(Rect(x: area.x, y: y, width: area.width, height: 1), style: .reverse)
                buffer.write("›", x: area.x, y: y, style: .reverse, clip: area)
            }
            var x = area.x + 2
            for (columnIndex, column) in columns.enumerated() where columnIndex < row.count {
                let item = row[columnIndex]
                let width = columnIndex == columns.count - 1 ? max(0, area.maxX - x) : column.width
                var style = item.style
                if isSelected { style.reverse = true }
                buffer.write(Self.aligned(item.text, width, column.alignRight), x: x, y: y, style: style, clip: area)
                x += width + 1
            }
        }
    }

    /// `text` fitted to `width` columns, padded on the left when `right`.
    public static func aligned(_ text: String, _ width: Int, _ right: Bool) -> String {
        let fitted = DisplayWidth.fit(text, to: width)
        guard right else { return fitted }
        let used = DisplayWidth.of(text)
        guard used < width else { return fitted }
        return String(repeating: " ", count: width - used) + text
    }
}
