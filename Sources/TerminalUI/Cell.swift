/// One column of the terminal: the grapheme drawn there and its style.
///
/// A wide grapheme occupies its cell and the next one; that next cell is a ``continuation``
/// and is never written on its own.
public struct Cell: Sendable, Hashable {
    public var character: Character
    public var style: Style
    /// Columns the character occupies: 1, 2, or 0 for the right half of a wide character.
    public var width: UInt8

    public init(_ character: Character = " ", style: Style = .plain) {
        self.character = character
        self.style = style
        width = UInt8(clamping: max(1, DisplayWidth.of(character)))
    }

    private init(character: Character, style: Style, width: UInt8) {
        self.character = character
        self.style = style
        self.width = width
    }

    public static let blank = Cell()

    /// The right half of a wide character, in the wide character's style.
    public static func continuation(_ style: Style) -> Cell {
        Cell(character: " ", style: style, width: 0)
    }

    public var isContinuation: Bool { width == 0 }
}
