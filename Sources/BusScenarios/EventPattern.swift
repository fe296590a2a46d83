import BureauSchemas
import Bus
import Runtime
import SwiftProtobuf

/// What an expected event must look like: its type and the fields of its payload.
///
/// Payloads are compared in protobuf's JSON mapping (lowerCamelCase names, enums by name,
/// decimals and 64-bit integers as text). Scalars compare by their text, so `500.00` in a
/// scenario file matches the decimal text `"500.00"`. The text `*` matches any value, present
/// or absent: that is how a pattern leaves out ids and times. Envelope fields (position, id,
/// time, producer) are never compared.
public struct EventPattern: Sendable, CustomStringConvertible {
    /// How the members of the payload's objects are compared.
    public enum Matching: Sendable, Equatable {
        /// Every field must be as given, and no other field may be set: a typed message.
        case exact
        /// The fields given must match; fields left out are not compared: a scenario file.
        case subset
    }

    public let type: String
    public let payload: JSONValue
    public let matching: Matching

    /// An event of `type` whose payload has the given fields (and maybe others).
    public init(type: String, fields: JSONValue = .object([])) {
        self.type = type
        payload = fields
        matching = .subset
    }

    /// Exactly `message`, except the fields at `ignoring` (JSON names; `a.b` reaches into
    /// objects and into every item of a list), which match anything.
    public init(_ message: some SwiftProtobuf.Message, ignoring: [String] = []) {
        type = Swift.type(of: message).protoMessageName
        var payload: JSONValue
        do {
            payload = try JSONValue(parsing: try message.jsonString())
        } catch {
            // Not an empty object, which a subset pattern would find in any event: a field no
            // event has, so that the test fails and says why.
            payload = .object([("expected message not encodable", .string("\(error)"))])
        }
        for path in ignoring {
            payload = payload.settingWildcard(at: path.split(separator: ".").map(String.init)[...])
        }
        self.payload = payload
        matching = .exact
    }

    /// The fields of `event`'s payload that do not match; nil when the type differs.
    public func mismatches(in event: StoredEvent) -> [FieldDifference]? {
        guard event.type == type else { return nil }
        return Self.mismatches(payload, EventJSON.payload(type: event.type, bytes: event.payload), matching, at: "")
    }

    public func matches(_ event: StoredEvent) -> Bool { mismatches(in: event)?.isEmpty == true }

    public var description: String { "\(type) \(payload)" }

    static func mismatches(
        _ pattern: JSONValue, _ actual: JSONValue?, _ matching: Matching, at path: String
    ) -> [FieldDifference] {
        if pattern.isWildcard { return [] }
        guard let actual else {
            return pattern.isDefault ? [] : [FieldDifference(path: path, before: pattern, after: nil)]
        }
        switch (pattern, actual) {
        case (.object(let expected), .object(let members)):
            var result: [FieldDifference] = []
            for (key, value) in expected {
                result += mismatches(value, actual[key], matching, at: path.isEmpty ? key : "\(path).\(key)")
            }
            if matching == .exact {
                for (key, value) in members where pattern[key] == nil {
                    result.append(
                        FieldDifference(path: path.isEmpty ? key : "\(path).\(key)", before: nil, after: value))
                }
            }
            return result
        case (.array(let expected), .array(let items)) where expected.count == items.count:
            return zip(expected, items).enumerated().flatMap { index, pair in
                mismatches(pair.0, pair.1, matching, at: "\(path)[\(index)]")
            }
        default:
            guard let expected = pattern.scalarText, expected == actual.scalarText else {
                return [FieldDifference(path: path, before: pattern, after: actual)]
            }
            return []
        }
    }
}

extension JSONValue {
    /// The text `*`: any value, or none.
    var isWildcard: Bool { self == .string("*") }

    /// A scalar's text (a string's content, a number as written, true/false, null); nil for
    /// objects and arrays.
    var scalarText: String? {
        switch self {
        case .null: "null"
        case .bool(let value): value ? "true" : "false"
        case .number(let text), .string(let text): text
        case .array, .object: nil
        }
    }

    /// Whether an absent field (left out by protobuf's JSON because it holds its default) matches this.
    var isDefault: Bool {
        switch self {
        case .array(let items): return items.isEmpty
        case .object(let members): return members.allSatisfy { $0.1.isDefault || $0.1.isWildcard }
        default:
            guard let text = scalarText else { return false }
            return ["", "false", "null"].contains(text) || text.hasSuffix("_UNSPECIFIED") || Double(text) == 0
        }
    }

    /// The document with the value at `path` replaced by `*` (added when absent).
    func settingWildcard(at path: ArraySlice<String>) -> JSONValue {
        guard let key = path.first else { return .string("*") }
        switch self {
        case .object(var members):
            if let index = members.firstIndex(where: { $0.0 == key }) {
                members[index].1 = members[index].1.settingWildcard(at: path.dropFirst())
            } else {
                members.append((key, JSONValue.object([]).settingWildcard(at: path.dropFirst())))
            }
            return .object(members)
        case .array(let items):
            return .array(items.map { $0.settingWildcard(at: path) })
        default:
            return path.count == 1 ? .string("*") : self
        }
    }
}
