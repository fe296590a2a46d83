#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One field that differs between two JSON documents.
public struct FieldDifference: Sendable, Equatable, CustomStringConvertible {
    /// Where, e.g. `payload.base` or `pairs[1].quote`; empty for the whole document.
    public let path: String
    /// nil where the field is absent (protobuf's JSON leaves out default values).
    public let before: JSONValue?
    public let after: JSONValue?

    public init(path: String, before: JSONValue?, after: JSONValue?) {
        self.path = path
        self.before = before
        self.after = after
    }

    /// `path: before → after`, `(absent)` for a missing side.
    public var description: String {
        "\(path.isEmpty ? "(the whole value)" : path): \(before?.description ?? "(absent)") → "
            + (after?.description ?? "(absent)")
    }

    /// The difference as `{"path":…,"before":…,"after":…}`.
    public var json: JSONValue {
        .object([("path", .string(path)), ("before", before ?? .null), ("after", after ?? .null)])
    }
}
