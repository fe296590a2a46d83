import Foundation

/// A command URL built in code, `bureau://<module>/<command>?<name>=<value>&…`, with every
/// value escaped so that it stays one value (an `&` or `=` typed into a prompt cannot add a
/// parameter).
///
/// Build one through the typed builders each feature module generates from its
/// ``CommandSpec``s (`CommandURL.Watchlist.add(base:quote:)`, in the feature's
/// `CommandURL+<Module>.swift`), so that a parameter's name is written once, in the spec.
/// Values are text as a person gives them; ``CommandRouter`` checks each against its kind.
public struct CommandURL: Sendable, Hashable, CustomStringConvertible {
    /// The URL, e.g. `bureau://watchlist/add?base=EUR&quote=USD`.
    public let text: String

    /// The URL of `command` of `module` with `arguments` in the order given; nil values are
    /// left out (an optional parameter not given).
    public init(module: String, command: String, arguments: [(name: String, value: String?)]) {
        let query = arguments.compactMap { name, value in
            value.map { Self.escaped(name) + "=" + Self.escaped($0) }
        }
        text = "bureau://\(module)/\(command)" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
    }

    public var description: String { text }

    /// Text made safe for a query string: the characters URLs give meaning to are escaped.
    static func escaped(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: queryValue) ?? text
    }

    private static let queryValue = CharacterSet.urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=?#+"))
}
