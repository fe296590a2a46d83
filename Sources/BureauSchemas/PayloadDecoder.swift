import SwiftProtobuf

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Decodes a message from protobuf's binary format into the same value swift-protobuf's own
/// decoder makes, for the field types Bureau's schemas use, in a fraction of its time.
///
/// Replay, a projection rebuild and a catching-up reducer host decode an event's payload for
/// every event they fold, and swift-protobuf's `init(serializedBytes:)` spent most of that time
/// around the fields rather than on them: its decoder's options and extension map, its
/// recursion budget, the bytes reached through a generic protocol. This decoder reads the
/// fields with ``WireReader`` and hands them to the generated `decodeMessage(decoder:)`, so
/// the schemas' generated code still decides which field goes where.
///
/// It decodes only what it can decode exactly as swift-protobuf does: strings, bytes, the
/// varint scalars, enums, `fixed64`, and messages, singular or repeated. At anything else it
/// stops with ``Deferred``, and ``PayloadDecodable/init(payloadBytes:)`` decodes the bytes
/// with swift-protobuf instead, whose value or error the caller then gets: a field the schema
/// does not know (swift-protobuf keeps it among the message's unknown fields), a wire type
/// other than the field's, a field type not listed above, a packed repeated field, malformed
/// bytes, text that is not UTF-8, nesting deeper than swift-protobuf allows. So a caller sees
/// no difference but the time, which `BureauSchemasTests` checks by decoding the same bytes,
/// valid and not, both ways.
public struct PayloadDecoder: SwiftProtobuf.Decoder {
    /// This decoder cannot decode the bytes as swift-protobuf would; swift-protobuf must.
    struct Deferred: Error {}

    /// swift-protobuf's default limit of nested messages (`BinaryDecodingOptions`).
    static let depthLimit = 100

    private var reader: WireReader
    /// The current field's number and value, as ``WireReader`` read them.
    private var value: WireReader.Value = .varint(0)
    /// Whether the generated code took the current field: one it did not is unknown to it.
    private var consumed = true
    /// How many messages enclose this one.
    private let depth: Int

    init(_ bytes: UnsafeRawBufferPointer, range: Range<Int>? = nil, depth: Int = 0) {
        reader = WireReader(bytes, range: range)
        self.depth = depth
    }

    /// The message `bytes` encode, or nil when only swift-protobuf can tell. Called through
    /// ``PayloadDecodable``, whose conformances compile it for each message type: compiled for
    /// any, it looked up the type's metadata at run time for every message, which cost more
    /// than the decoding.
    static func decode<M: SwiftProtobuf.Message>(_ type: M.Type, from bytes: UnsafeRawBufferPointer) -> M? {
        var message = M()
        var decoder = PayloadDecoder(bytes)
        do {
            try message.decodeMessage(decoder: &decoder)
        } catch {
            return nil
        }
        // What `init(serializedBytes:)` checks last (a proto2 required field; none in proto3).
        return message.isInitialized ? message : nil
    }

    public mutating func nextFieldNumber() throws -> Int? {
        guard consumed else { throw Deferred() }
        if reader.isAtEnd { return nil }
        // Most fields of an event's payload: a one-byte tag, and a small number or short text.
        if let (field, value) = reader.nextShort() {
            self.value = value
            consumed = false
            return Int(field)
        }
        // swift-protobuf reads a tag of at most five bytes, and refuses a longer one.
        var tagEnd = reader.offset
        while tagEnd < reader.end && reader.bytes[tagEnd] & 0x80 != 0 { tagEnd += 1 }
        guard tagEnd - reader.offset < 5 else { throw Deferred() }
        let field: UInt64
        do {
            (field, value) = try reader.next()
        } catch {
            throw Deferred()
        }
        // swift-protobuf refuses a length of 2 GiB or more, as protobuf's own parsers do.
        if case .bytes(let range) = value, range.count >= 0x7fff_ffff { throw Deferred() }
        consumed = false
        return Int(field)
    }

    // Binary decoding lets a later member of a oneof replace an earlier one, as swift-protobuf's does.
    public mutating func handleConflictingOneOf() throws {}

    // MARK: What Bureau's schemas use

    // Each field type is read by one helper below, which takes the field (marks it consumed)
    // only when its wire type is the type's; the plain and the optional overload share it.

    public mutating func decodeSingularStringField(value: inout String) throws {
        if let text = try text() { value = text }
    }
    public mutating func decodeSingularStringField(value: inout String?) throws {
        if let text = try text() { value = text }
    }
    public mutating func decodeRepeatedStringField(value: inout [String]) throws {
        if let text = try text() { value.append(text) }
    }
    public mutating func decodeSingularBytesField(value: inout Data) throws {
        if let bytes = bytes() { value = bytes }
    }
    public mutating func decodeSingularBytesField(value: inout Data?) throws {
        if let bytes = bytes() { value = bytes }
    }
    public mutating func decodeSingularInt32Field(value: inout Int32) throws {
        if let varint = varint() { value = Int32(truncatingIfNeeded: varint) }
    }
    public mutating func decodeSingularInt32Field(value: inout Int32?) throws {
        if let varint = varint() { value = Int32(truncatingIfNeeded: varint) }
    }
    public mutating func decodeSingularInt64Field(value: inout Int64) throws {
        if let varint = varint() { value = Int64(bitPattern: varint) }
    }
    public mutating func decodeSingularInt64Field(value: inout Int64?) throws {
        if let varint = varint() { value = Int64(bitPattern: varint) }
    }
    public mutating func decodeSingularUInt32Field(value: inout UInt32) throws {
        if let varint = varint() { value = UInt32(truncatingIfNeeded: varint) }
    }
    public mutating func decodeSingularUInt32Field(value: inout UInt32?) throws {
        if let varint = varint() { value = UInt32(truncatingIfNeeded: varint) }
    }
    public mutating func decodeSingularUInt64Field(value: inout UInt64) throws {
        if let varint = varint() { value = varint }
    }
    public mutating func decodeSingularUInt64Field(value: inout UInt64?) throws {
        if let varint = varint() { value = varint }
    }
    public mutating func decodeSingularBoolField(value: inout Bool) throws {
        if let varint = varint() { value = varint != 0 }
    }
    public mutating func decodeSingularBoolField(value: inout Bool?) throws {
        if let varint = varint() { value = varint != 0 }
    }
    public mutating func decodeSingularFixed64Field(value: inout UInt64) throws {
        if let bits = fixed64() { value = bits }
    }
    public mutating func decodeSingularFixed64Field(value: inout UInt64?) throws {
        if let bits = fixed64() { value = bits }
    }
    public mutating func decodeSingularEnumField<E: SwiftProtobuf.Enum>(value: inout E) throws
    where E.RawValue == Int {
        if let known: E = enumValue() { value = known }
    }
    public mutating func decodeSingularEnumField<E: SwiftProtobuf.Enum>(value: inout E?) throws
    where E.RawValue == Int {
        if let known: E = enumValue() { value = known }
    }

    public mutating func decodeSingularMessageField<M: SwiftProtobuf.Message>(value: inout M?) throws {
        guard case .bytes(let range) = self.value else { return }
        // A message field met twice is merged, as swift-protobuf merges it.
        var message = value ?? M()
        try decodeNested(&message, range)
        value = message
        consumed = true
    }

    public mutating func decodeRepeatedMessageField<M: SwiftProtobuf.Message>(value: inout [M]) throws {
        guard case .bytes(let range) = self.value else { return }
        var message = M()
        try decodeNested(&message, range)
        value.append(message)
        consumed = true
    }

    // MARK: Helpers

    /// The current field's varint, consumed; nil (left for swift-protobuf) for another wire type.
    private mutating func varint() -> UInt64? {
        guard case .varint(let varint) = value else { return nil }
        consumed = true
        return varint
    }

    /// The current field's eight bytes, consumed; nil for another wire type.
    private mutating func fixed64() -> UInt64? {
        guard case .fixed64(let bits) = value else { return nil }
        consumed = true
        return bits
    }

    /// The current field's bytes, copied and consumed; nil for another wire type.
    private mutating func bytes() -> Data? {
        guard case .bytes(let range) = value else { return nil }
        consumed = true
        return Data(UnsafeRawBufferPointer(rebasing: reader.bytes[range]))
    }

    /// The current field's enum value, consumed; nil for another wire type, and for a value the
    /// enum does not know (an unknown field to swift-protobuf).
    private mutating func enumValue<E: SwiftProtobuf.Enum>() -> E? where E.RawValue == Int {
        guard case .varint(let varint) = value,
            let known = E(rawValue: Int(Int32(truncatingIfNeeded: varint)))
        else { return nil }
        consumed = true
        return known
    }

    /// The current field's bytes as text, consumed; nil for another wire type. Throws for bytes
    /// that are not UTF-8, which swift-protobuf refuses.
    private mutating func text() throws -> String? {
        guard case .bytes(let range) = value else { return nil }
        let bytes = UnsafeRawBufferPointer(rebasing: reader.bytes[range])
        // `String(decoding:as:)` repairs what is not UTF-8, so the text is the bytes themselves
        // exactly when there was nothing to repair. (`String(validating:as:)` looked up generic
        // type metadata at run time for every string, and took longer than swift-protobuf.)
        let text = String(decoding: bytes, as: UTF8.self)
        guard !bytes.contains(where: { $0 >= 0x80 }) || text.utf8.elementsEqual(bytes) else { throw Deferred() }
        consumed = true
        return text
    }

    private func decodeNested<M: SwiftProtobuf.Message>(_ message: inout M, _ range: Range<Int>) throws {
        guard depth + 1 < Self.depthLimit else { throw Deferred() }
        var nested = PayloadDecoder(reader.bytes, range: range, depth: depth + 1)
        try message.decodeMessage(decoder: &nested)
    }

    // MARK: Left to swift-protobuf

    public mutating func decodeSingularFloatField(value: inout Float) throws { throw Deferred() }
    public mutating func decodeSingularFloatField(value: inout Float?) throws { throw Deferred() }
    public mutating func decodeRepeatedFloatField(value: inout [Float]) throws { throw Deferred() }
    public mutating func decodeSingularDoubleField(value: inout Double) throws { throw Deferred() }
    public mutating func decodeSingularDoubleField(value: inout Double?) throws { throw Deferred() }
    public mutating func decodeRepeatedDoubleField(value: inout [Double]) throws { throw Deferred() }
    public mutating func decodeRepeatedInt32Field(value: inout [Int32]) throws { throw Deferred() }
    public mutating func decodeRepeatedInt64Field(value: inout [Int64]) throws { throw Deferred() }
    public mutating func decodeRepeatedUInt32Field(value: inout [UInt32]) throws { throw Deferred() }
    public mutating func decodeRepeatedUInt64Field(value: inout [UInt64]) throws { throw Deferred() }
    public mutating func decodeSingularSInt32Field(value: inout Int32) throws { throw Deferred() }
    public mutating func decodeSingularSInt32Field(value: inout Int32?) throws { throw Deferred() }
    public mutating func decodeRepeatedSInt32Field(value: inout [Int32]) throws { throw Deferred() }
    public mutating func decodeSingularSInt64Field(value: inout Int64) throws { throw Deferred() }
    public mutating func decodeSingularSInt64Field(value: inout Int64?) throws { throw Deferred() }
    public mutating func decodeRepeatedSInt64Field(value: inout [Int64]) throws { throw Deferred() }
    public mutating func decodeSingularFixed32Field(value: inout UInt32) throws { throw Deferred() }
    public mutating func decodeSingularFixed32Field(value: inout UInt32?) throws { throw Deferred() }
    public mutating func decodeRepeatedFixed32Field(value: inout [UInt32]) throws { throw Deferred() }
    public mutating func decodeRepeatedFixed64Field(value: inout [UInt64]) throws { throw Deferred() }
    public mutating func decodeSingularSFixed32Field(value: inout Int32) throws { throw Deferred() }
    public mutating func decodeSingularSFixed32Field(value: inout Int32?) throws { throw Deferred() }
    public mutating func decodeRepeatedSFixed32Field(value: inout [Int32]) throws { throw Deferred() }
    public mutating func decodeSingularSFixed64Field(value: inout Int64) throws { throw Deferred() }
    public mutating func decodeSingularSFixed64Field(value: inout Int64?) throws { throw Deferred() }
    public mutating func decodeRepeatedSFixed64Field(value: inout [Int64]) throws { throw Deferred() }
    public mutating func decodeRepeatedBoolField(value: inout [Bool]) throws { throw Deferred() }
    public mutating func decodeRepeatedBytesField(value: inout [Data]) throws { throw Deferred() }
    public mutating func decodeRepeatedEnumField<E: SwiftProtobuf.Enum>(value: inout [E]) throws
    where E.RawValue == Int {
        throw Deferred()
    }
    public mutating func decodeSingularGroupField<G: SwiftProtobuf.Message>(value: inout G?) throws { throw Deferred() }
    public mutating func decodeRepeatedGroupField<G: SwiftProtobuf.Message>(value: inout [G]) throws {
        throw Deferred()
    }
    public mutating func decodeMapField<KeyType, ValueType: MapValueType>(
        fieldType: _ProtobufMap<KeyType, ValueType>.Type, value: inout _ProtobufMap<KeyType, ValueType>.BaseType
    ) throws { throw Deferred() }
    public mutating func decodeMapField<KeyType, ValueType>(
        fieldType: _ProtobufEnumMap<KeyType, ValueType>.Type, value: inout _ProtobufEnumMap<KeyType, ValueType>.BaseType
    ) throws where ValueType.RawValue == Int { throw Deferred() }
    public mutating func decodeMapField<KeyType, ValueType>(
        fieldType: _ProtobufMessageMap<KeyType, ValueType>.Type,
        value: inout _ProtobufMessageMap<KeyType, ValueType>.BaseType
    ) throws { throw Deferred() }
    public mutating func decodeExtensionField(
        values: inout ExtensionFieldValueSet, messageType: any SwiftProtobuf.Message.Type, fieldNumber: Int
    ) throws { throw Deferred() }
}
