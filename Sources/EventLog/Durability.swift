/// When appended events are made durable (fdatasync) relative to their acknowledgement.
///
/// - `always`: before acknowledging a batch; every batch that arrives together shares one
///   fdatasync (group commit). An acknowledged event survives a power cut. The default.
/// - `interval(ms)`: acknowledged once written to the OS; fdatasync at most every `ms`
///   milliseconds. A crash of the daemon loses nothing; a power cut loses at most the last
///   interval.
/// - `never`: the OS writes back when it chooses. A crash of the daemon loses nothing; a
///   power cut may lose anything not yet written back.
public enum Durability: Sendable, Equatable, CustomStringConvertible {
    case always
    case interval(milliseconds: Int)
    case never

    /// Parses `always`, `interval=<ms>` or `never`.
    public init(parsing text: String) throws {
        switch text {
        case "always": self = .always
        case "never": self = .never
        default:
            let parts = text.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0] == "interval", let milliseconds = Int(parts[1]), milliseconds > 0 else {
                throw EventLogError.badDurability(text)
            }
            self = .interval(milliseconds: milliseconds)
        }
    }

    public var description: String {
        switch self {
        case .always: "always"
        case .interval(let milliseconds): "interval=\(milliseconds)"
        case .never: "never"
        }
    }
}
