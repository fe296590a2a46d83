import Bus
import Runtime

/// An event a scenario expects, and the values to keep from it for later steps.
public struct ExpectedEvent: Sendable {
    public let type: String
    /// The fields that must match (others are not compared); `*` matches any value.
    public let fields: JSONValue
    /// Variable name → field path in the payload: `${name}` in later steps is that field's value.
    public let captures: [(variable: String, path: String)]
    public let line: Int
}
