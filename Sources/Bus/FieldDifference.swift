#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One field that differs between two JSON documents: a state before an event and after it, a
/// recorded event and the one replay computed, or what a pattern expects and what came
/// (``expectationText``).
public struct FieldDifference: Sendable, Equatable, CustomStringConvertible {
    /// Where, e.g. `payload.base` or `pairs[1].quote`; empty for the whole document.
    public let path: String
    /// nil where the field is absent (protobuf's JSON leaves out default values; a pattern that
    /// does not name the field).
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

    /// `path: expected before, got after`: the difference read as a pattern's (`before`) unmet by
    /// a payload (`after`).
    public var expectationText: String {
        "\(path.isEmpty ? "(the payload)" : path): expected \(before?.description ?? "(absent)"), got "
            + (after?.description ?? "(absent)")
    }

    /// The difference as `{"path":…,"before":…,"after":…}`.
    public var json: JSONValue {
        .object([("path", .string(path)), ("before", before ?? .null), ("after", after ?? .null)])
    }
}
