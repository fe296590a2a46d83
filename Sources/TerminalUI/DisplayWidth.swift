/// How many terminal columns text occupies: 0 for combining marks and controls, 2 for East
/// Asian wide characters and emoji, else 1.
///
/// Ambiguous-width characters (box drawing, most currency symbols) count as 1, as terminals
/// in Western locales draw them.
public enum DisplayWidth {
    /// The columns one grapheme occupies.
    public static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        // An emoji presentation selector widens a narrow symbol (e.g. "☀️").
        if scalars.contains(where: { $0.value == 0xFE0F }) && first.properties.isEmoji { return 2 }
        var width = 0
        for scalar in scalars { width = max(width, of(scalar)) }
        return width
    }

    /// The columns a string occupies.
    public static func of(_ text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    /// The columns one scalar occupies on its own.
    public static func of(_ scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        if value < 0x20 || (0x7F..<0xA0).contains(value) { return 0 }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        if (0x1160...0x11FF).contains(value) { return 0 }  // Hangul medial vowels join the syllable.
        if scalar.properties.isEmojiPresentation { return 2 }
        for range in wideRanges where range.contains(value) { return 2 }
        return 1
    }

    /// East Asian Wide and Fullwidth blocks (Unicode 15, abridged to whole blocks).
    static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF,
        0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19,
        0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF,
        0x20000...0x2FFFD, 0x30000...0x3FFFD,
    ]

    /// The longest prefix of `text` that fits in `columns`, and its width.
    public static func prefix(of text: some StringProtocol, fitting columns: Int) -> (text: String, width: Int) {
        var result = ""
        var width = 0
        for character in text {
            let next = of(character)
            if width + next > columns { break }
            result.append(character)
            width += next
        }
        return (result, width)
    }

    /// `text` cut or padded with spaces to exactly `columns`; a cut ends with "…".
    public static func fit(_ text: some StringProtocol, to columns: Int) -> String {
        guard columns > 0 else { return "" }
        let width = of(text)
        if width <= columns { return String(text) + String(repeating: " ", count: columns - width) }
        let cut = prefix(of: text, fitting: columns - 1)
        return cut.text + "…" + String(repeating: " ", count: columns - 1 - cut.width)
    }
}
