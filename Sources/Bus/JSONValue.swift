#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A JSON document as a value: what replay prints, compares and diffs.
///
/// Numbers keep their literal text (a state's `Decimal` stays exact) and objects keep their
/// keys in the order written, so printing a parsed document gives it back unchanged.
public indirect enum JSONValue: Sendable, Equatable, CustomStringConvertible {
    case null
    case bool(Bool)
    /// The number as written, e.g. `1.1172`.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    /// The member named `key` of an object; nil for anything else.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    /// An integer number.
    public static func integer(_ value: some BinaryInteger) -> JSONValue { .number(String(value)) }

    /// Parses JSON text.
    public init(parsing text: some StringProtocol) throws(JSONParseError) {
        var parser = JSONParser(Array(text.utf8))
        self = try parser.document()
    }

    /// Parses JSON bytes.
    public init(parsing data: Data) throws(JSONParseError) {
        var parser = JSONParser(Array(data))
        self = try parser.document()
    }

    /// One line, no spaces.
    public var description: String {
        var out = ""
        write(to: &out, indent: nil, level: 0)
        return out
    }

    /// Indented by two spaces per level, for people.
    public var pretty: String {
        var out = ""
        write(to: &out, indent: "  ", level: 0)
        return out
    }

    private func write(to out: inout String, indent: String?, level: Int) {
        let newline = indent.map { "\n" + String(repeating: $0, count: level + 1) } ?? ""
        let closing = indent.map { "\n" + String(repeating: $0, count: level) } ?? ""
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .number(let text): out += text
        case .string(let text): out += JSONText.quoted(text)
        case .array(let items):
            guard !items.isEmpty else {
                out += "[]"
                return
            }
            out += "["
            for (index, item) in items.enumerated() {
                out += (index > 0 ? "," : "") + newline
                item.write(to: &out, indent: indent, level: level + 1)
            }
            out += closing + "]"
        case .object(let members):
            guard !members.isEmpty else {
                out += "{}"
                return
            }
            out += "{"
            for (index, (key, value)) in members.enumerated() {
                out += (index > 0 ? "," : "") + newline + JSONText.quoted(key) + (indent == nil ? ":" : ": ")
                value.write(to: &out, indent: indent, level: level + 1)
            }
            out += closing + "}"
        }
    }
}

extension JSONValue {
    /// The fields that differ between `self` (before) and `other` (after), leaves first found first.
    ///
    /// Objects are compared key by key, arrays index by index; anything else as a whole.
    public func differences(to other: JSONValue, at path: String = "") -> [FieldDifference] {
        switch (self, other) {
        case (.object(let before), .object(let after)):
            var result: [FieldDifference] = []
            let afterKeys = Dictionary(after.map { ($0.0, $0.1) }, uniquingKeysWith: { first, _ in first })
            let beforeKeys = Set(before.map(\.0))
            for (key, value) in before {
                let child = path.isEmpty ? key : path + "." + key
                if let newValue = afterKeys[key] {
                    result += value.differences(to: newValue, at: child)
                } else {
                    result.append(FieldDifference(path: child, before: value, after: nil))
                }
            }
            for (key, value) in after where !beforeKeys.contains(key) {
                result.append(FieldDifference(path: path.isEmpty ? key : path + "." + key, before: nil, after: value))
            }
            return result
        case (.array(let before), .array(let after)):
            var result: [FieldDifference] = []
            for index in 0..<max(before.count, after.count) {
                let child = "\(path)[\(index)]"
                switch (index < before.count ? before[index] : nil, index < after.count ? after[index] : nil) {
                case (let old?, let new?): result += old.differences(to: new, at: child)
                case (let old, let new): result.append(FieldDifference(path: child, before: old, after: new))
                }
            }
            return result
        default:
            return self == other ? [] : [FieldDifference(path: path, before: self, after: other)]
        }
    }
}

extension JSONValue {
    /// The document with each array of scalars sorted wherever `keepsMeaning` accepts the
    /// sorted document; other arrays keep their order.
    ///
    /// A `Set` encodes in an order that differs between two equal sets, so two equal states
    /// would print and diff differently; a caller that can decode the document tells sets
    /// (sorting leaves the value equal) from ordered lists (it does not).
    public func sortingUnorderedArrays(keepsMeaning: (JSONValue) -> Bool) -> JSONValue {
        var result = self
        for path in unsortedScalarArrays(at: []) {
            let candidate = result.replacing(at: path[...]) { value in
                guard case .array(let items) = value else { return value }
                return .array(items.sorted { $0.description < $1.description })
            }
            if keepsMeaning(candidate) { result = candidate }
        }
        return result
    }

    private var isScalar: Bool {
        switch self {
        case .array, .object: false
        default: true
        }
    }

    /// Paths (member or item indexes) of the arrays of scalars that are not sorted.
    private func unsortedScalarArrays(at path: [Int]) -> [[Int]] {
        switch self {
        case .array(let items):
            if items.count > 1, items.allSatisfy(\.isScalar) {
                let texts = items.map(\.description)
                return texts == texts.sorted() ? [] : [path]
            }
            return items.enumerated().flatMap { $1.unsortedScalarArrays(at: path + [$0]) }
        case .object(let members):
            return members.enumerated().flatMap { $1.1.unsortedScalarArrays(at: path + [$0]) }
        default:
            return []
        }
    }

    private func replacing(at path: ArraySlice<Int>, _ change: (JSONValue) -> JSONValue) -> JSONValue {
        guard let first = path.first else { return change(self) }
        switch self {
        case .array(var items) where items.indices.contains(first):
            items[first] = items[first].replacing(at: path.dropFirst(), change)
            return .array(items)
        case .object(var members) where members.indices.contains(first):
            members[first].1 = members[first].1.replacing(at: path.dropFirst(), change)
            return .object(members)
        default:
            return self
        }
    }
}
