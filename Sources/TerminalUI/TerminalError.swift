#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why the terminal could not be used.
public enum TerminalError: Error, CustomStringConvertible {
    case notATerminal

    public var description: String {
        switch self {
        case .notATerminal: "standard input is not a terminal; run `bureau tui` in a terminal"
        }
    }
}
