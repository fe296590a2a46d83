/// The checked, normalised arguments of one command.
public struct CommandArguments: Sendable {
    public let values: [String: String]

    public init(values: [String: String]) {
        self.values = values
    }

    /// The value of a required parameter (the router has checked it is there).
    public subscript(name: String) -> String { values[name] ?? "" }

    public func optional(_ name: String) -> String? { values[name] }
}
