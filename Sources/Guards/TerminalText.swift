/// Text that came from a peer, a file or a payload, made safe to show in a terminal or to write
/// into a log that someone reads in one: every control character is written as an escape
/// (`\u{1B}`, `\n`), so that a terminal never runs the escape sequences such text may carry
/// and a line of a log or of a listing stays one line.
///
/// Escaped: C0 controls and DEL, C1 controls (U+0080…U+009F, which terminals may take as
/// 8-bit escape sequences), the line and paragraph separators, and the bidirectional
/// overrides and isolates (which reorder what a reader sees). Everything else is kept as is.
public enum TerminalText {
    /// `text` with every control character escaped; with `keepingLineBreaks`, newlines and
    /// tabs are kept (for a whole listing whose lines the program itself made).
    public static func escaped(_ text: String, keepingLineBreaks: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: { needsEscape($0, keepingLineBreaks: keepingLineBreaks) }) else {
            return text
        }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar, keepingLineBreaks: keepingLineBreaks) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default: result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return result
    }

    /// Whether `scalar` is written as an escape.
    public static func needsEscape(_ scalar: Unicode.Scalar, keepingLineBreaks: Bool = false) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: !keepingLineBreaks
        case 0x00..<0x20, 0x7F...0x9F: true
        case 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: true
        default: false
        }
    }
}
