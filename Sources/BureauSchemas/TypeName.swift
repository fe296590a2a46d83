/// Rules for event type names: full protobuf names such as `bureau.watchlist.PairAdded`.
public enum TypeName {
    /// The longest type name the bus accepts, in bytes.
    public static let maxLength = 200

    /// Why `name` cannot be a type name on the bus, or nil if it can.
    ///
    /// A type name is ASCII letters, digits and underscores in dot-separated parts, at least
    /// two parts (a package and a message), and does not start with `_` (reserved for the
    /// bus's own topics such as `_heartbeat`).
    public static func problem(with name: String) -> String? {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty else { return "the type name is empty" }
        guard bytes.count <= maxLength else { return "the type name is \(bytes.count) bytes, over \(maxLength)" }
        guard bytes[0] != UInt8(ascii: "_") else { return "type names starting with '_' are reserved for the bus" }
        var parts = 1
        var previousWasDot = true
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "."):
                if previousWasDot { return "the type name '\(name)' has an empty part" }
                parts += 1
                previousWasDot = true
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
                previousWasDot = false
            default:
                return
                    "the type name '\(String(decoding: bytes, as: UTF8.self))' has a character other than letters, digits, '_' and '.'"
            }
        }
        if previousWasDot { return "the type name '\(name)' ends with '.'" }
        if parts < 2 { return "the type name '\(name)' has no package (expected e.g. bureau.watchlist.PairAdded)" }
        return nil
    }

    /// The package of a type name: everything before the last dot ("bureau.watchlist").
    public static func package(of name: String) -> Substring {
        guard let dot = name.lastIndex(of: ".") else { return "" }
        return name[..<dot]
    }

    /// The message name without its package ("PairAdded").
    public static func shortName(of name: String) -> Substring {
        guard let dot = name.lastIndex(of: ".") else { return Substring(name) }
        return name[name.index(after: dot)...]
    }
}
