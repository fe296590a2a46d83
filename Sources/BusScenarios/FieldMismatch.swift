import BureauSchemas
import Bus
import Runtime
import SwiftProtobuf

/// One field of a payload that is not as a pattern expects.
public struct FieldMismatch: Sendable, Equatable, CustomStringConvertible {
    /// Where, e.g. `quote` or `rates[2].rate`; empty for the whole payload.
    public let path: String
    /// nil where the pattern has no such field (an exact pattern met an extra field).
    public let expected: JSONValue?
    /// nil where the payload lacks the field (protobuf's JSON leaves out default values).
    public let actual: JSONValue?

    public init(path: String, expected: JSONValue?, actual: JSONValue?) {
        self.path = path
        self.expected = expected
        self.actual = actual
    }

    public var description: String {
        "\(path.isEmpty ? "(the payload)" : path): expected \(expected?.description ?? "(absent)"), got "
            + (actual?.description ?? "(absent)")
    }
}
