/// What the terminal is told about style: colours and attributes, attributes only, or nothing.
public enum ColorMode: Sendable, Equatable {
    /// Sixteen colours and attributes.
    case color
    /// Bold, dim, underline and reverse, no colour: `NO_COLOR` is set (https://no-color.org).
    case monochrome
    /// No escape sequences for style at all: `TERM=dumb`.
    case plain

    /// The mode an environment asks for; `NO_COLOR` counts only when non-empty, as the convention says.
    public static func detect(environment: [String: String]) -> ColorMode {
        let term = environment["TERM"] ?? ""
        if term == "dumb" { return .plain }
        if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return .monochrome }
        return .color
    }
}
