/// How a cell is drawn: colours and attributes.
///
/// Screens should not rely on colour alone: with `NO_COLOR` or `TERM=dumb` the renderer drops
/// colours (and, for `dumb`, attributes too), so meaning must also show in the text.
public struct Style: Sendable, Hashable {
    public var foreground: Color?
    public var background: Color?
    public var bold: Bool
    public var dim: Bool
    public var underline: Bool
    public var reverse: Bool

    public init(
        foreground: Color? = nil, background: Color? = nil, bold: Bool = false, dim: Bool = false,
        underline: Bool = false, reverse: Bool = false
    ) {
        self.foreground = foreground
        self.background = background
        self.bold = bold
        self.dim = dim
        self.underline = underline
        self.reverse = reverse
    }

    public static let plain = Style()
    public static let bold = Style(bold: true)
    public static let dim = Style(dim: true)
    public static let reverse = Style(reverse: true)

    public static func foreground(_ color: Color, bold: Bool = false) -> Style {
        Style(foreground: color, bold: bold)
    }

    /// The SGR sequence that sets this style from a reset, for a terminal of `mode`.
    func sequence(for mode: ColorMode) -> String {
        guard mode != .plain else { return "" }
        var codes = [0]
        if bold { codes.append(1) }
        if dim { codes.append(2) }
        if underline { codes.append(4) }
        if reverse { codes.append(7) }
        if mode == .color {
            if let foreground { codes.append(foreground.foregroundCode) }
            if let background { codes.append(background.backgroundCode) }
        }
        return "\u{1B}[" + codes.map(String.init).joined(separator: ";") + "m"
    }
}
