import BureauSchemas
import Bus
import EventLog

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

/// JSON that does not parse, and where.
public struct JSONParseError: Error, CustomStringConvertible {
    /// The byte offset of the problem.
    public let offset: Int
    public let reason: String
    public var description: String { "\(reason) at byte \(offset)" }
}

/// A recursive-descent JSON parser (RFC 8259) over UTF-8 bytes.
struct JSONParser {
    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func document() throws(JSONParseError) -> JSONValue {
        let value = try parseValue()
        skipSpace()
        guard index == bytes.count else { throw fail("unexpected text after the value") }
        return value
    }

    private func fail(_ reason: String) -> JSONParseError { JSONParseError(offset: index, reason: reason) }

    private mutating func skipSpace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    private mutating func expect(_ literal: String, _ value: JSONValue) throws(JSONParseError) -> JSONValue {
        let expected = Array(literal.utf8)
        guard index + expected.count <= bytes.count, Array(bytes[index..<index + expected.count]) == expected else {
            throw fail("expected \(literal)")
        }
        index += expected.count
        return value
    }

    private mutating func parseValue() throws(JSONParseError) -> JSONValue {
        skipSpace()
        guard index < bytes.count else { throw fail("unexpected end of the text") }
        switch bytes[index] {
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "["):
            return try nested { (parser: inout JSONParser) throws(JSONParseError) in try parser.parseArray() }
        case UInt8(ascii: "{"):
            return try nested { (parser: inout JSONParser) throws(JSONParseError) in try parser.parseObject() }
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected character '\(Character(Unicode.Scalar(bytes[index])))'")
        }
    }

    /// Bounds nesting, so that hostile input cannot overflow the stack.
    private mutating func nested(
        _ body: (inout JSONParser) throws(JSONParseError) -> JSONValue
    ) throws(JSONParseError) -> JSONValue {
        depth += 1
        guard depth <= 512 else { throw fail("nested more than 512 levels deep") }
        defer { depth -= 1 }
        return try body(&self)
    }

    private mutating func parseArray() throws(JSONParseError) -> JSONValue {
        index += 1
        var items: [JSONValue] = []
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            items.append(try parseValue())
            skipSpace()
            guard index < bytes.count else { throw fail("unterminated array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            } else {
                throw fail("expected , or ] in an array")
            }
        }
    }

    private mutating func parseObject() throws(JSONParseError) -> JSONValue {
        index += 1
        var members: [(String, JSONValue)] = []
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a key") }
            let key = try parseString()
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected : after a key") }
            index += 1
            members.append((key, try parseValue()))
            skipSpace()
            guard index < bytes.count else { throw fail("unterminated object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            } else {
                throw fail("expected , or } in an object")
            }
        }
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        func digits(_ parser: inout JSONParser) -> Int {
            let from = parser.index
            while parser.index < parser.bytes.count,
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(parser.bytes[parser.index])
            {
                parser.index += 1
            }
            return parser.index - from
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard digits(&self) > 0 else { throw fail("a number needs digits") }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits(&self) > 0 else { throw fail("a number needs digits after the point") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard digits(&self) > 0 else { throw fail("a number needs digits in its exponent") }
        }
        return .number(String(decoding: bytes[start..<index], as: UTF8.self))
    }

    private mutating func parseString() throws(JSONParseError) -> String {
        index += 1
        var scalars = String.UnicodeScalarView()
        var run = index
        func flush(_ parser: JSONParser, _ scalars: inout String.UnicodeScalarView) {
            scalars.append(contentsOf: String(decoding: parser.bytes[run..<parser.index], as: UTF8.self).unicodeScalars)
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                flush(self, &scalars)
                index += 1
                return String(scalars)
            }
            if byte < 0x20 { throw fail("a control character in a string") }
            guard byte == UInt8(ascii: "\\") else {
                index += 1
                continue
            }
            flush(self, &scalars)
            index += 1
            guard index < bytes.count else { break }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800..<0xDC00).contains(code), index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                    bytes[index + 1] == UInt8(ascii: "u")
                {
                    index += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw fail("an unpaired surrogate") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let scalar = Unicode.Scalar(code) else { throw fail("an unpaired surrogate") }
                scalars.append(scalar)
            default: throw fail("an unknown escape \\\(Character(Unicode.Scalar(escape)))")
            }
            run = index
        }
        throw fail("unterminated string")
    }

    private mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= bytes.count,
            let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
        else { throw fail("expected four hex digits after \\u") }
        index += 4
        return value
    }
}

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

/// Events as JSON documents, so that a recorded event and a re-computed one can be shown and diffed.
public enum EventJSON {
    /// The payload in protobuf's JSON mapping; `{"unknown": true, "base64": …}` when the type is
    /// unknown or the bytes do not decode.
    public static func payload(type: String, bytes: Data) -> JSONValue {
        if let messageType = SchemaRegistry.messageType(named: type),
            let message = try? messageType.init(serializedBytes: bytes),
            let text = try? message.jsonString(), let value = try? JSONValue(parsing: text)
        {
            return value
        }
        return .object([("unknown", .bool(true)), ("base64", .string(bytes.base64EncodedString()))])
    }

    /// A committed event: position, id, type, time, producer, causation, correlation, payload.
    public static func recorded(_ event: StoredEvent) -> JSONValue {
        .object([
            ("position", .integer(event.position)),
            ("id", .string("\(event.id)")),
            ("type", .string(event.type)),
            ("time", .string("\(event.commitTime)")),
            (
                "producer",
                .object([("process", .string(event.producerProcess)), ("module", .string(event.producerModule))])
            ),
            ("causation", .integer(event.causation)),
            ("correlation", .string("\(event.correlation)")),
            ("payload", payload(type: event.type, bytes: event.payload)),
        ])
    }

    /// An event as a reducer computes it: no position, time or process, which the bus assigns.
    public static func computed(_ event: OutgoingEvent) -> JSONValue {
        .object([
            ("id", .string("\(event.id)")),
            ("type", .string(event.type)),
            ("producer", .object([("module", .string(event.module))])),
            ("causation", .integer(event.causation)),
            ("correlation", .string("\(event.correlation)")),
            ("payload", payload(type: event.type, bytes: event.payload)),
        ])
    }

    /// The fields a reducer decides (id, type, module, causation, correlation, payload) that
    /// differ between a recorded event and a re-computed one.
    public static func differences(recorded: StoredEvent, computed: OutgoingEvent) -> [FieldDifference] {
        var result: [FieldDifference] = []
        func compare(_ path: String, _ before: JSONValue, _ after: JSONValue) {
            result += before.differences(to: after, at: path)
        }
        compare("id", .string("\(recorded.id)"), .string("\(computed.id)"))
        compare("type", .string(recorded.type), .string(computed.type))
        compare("producer.module", .string(recorded.producerModule), .string(computed.module))
        compare("causation", .integer(recorded.causation), .integer(computed.causation))
        compare("correlation", .string("\(recorded.correlation)"), .string("\(computed.correlation)"))
        let before = payload(type: recorded.type, bytes: recorded.payload)
        let after = payload(type: computed.type, bytes: computed.payload)
        let payloadDifferences = before.differences(to: after, at: "payload")
        if payloadDifferences.isEmpty, recorded.payload != computed.payload {
            // Equal in JSON, different on the wire (field order, unknown fields): still a divergence.
            result.append(
                FieldDifference(
                    path: "payload (bytes)", before: .string(recorded.payload.base64EncodedString()),
                    after: .string(computed.payload.base64EncodedString())))
        } else {
            result += payloadDifferences
        }
        return result
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
