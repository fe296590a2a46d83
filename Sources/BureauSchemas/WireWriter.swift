#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Writes protobuf's binary wire format field by field, for the hot paths that
/// ``WireReader`` reads (envelopes); fields must be written in field-number order to match
/// what generated code writes.
public struct WireWriter {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    public mutating func varint(_ field: UInt64, _ value: UInt64) {
        guard value != 0 else { return }
        raw(field << 3)
        raw(value)
    }

    /// A `fixed64` field: eight bytes, little-endian. Nothing is written for 0.
    public mutating func fixed64(_ field: UInt64, _ value: UInt64) {
        guard value != 0 else { return }
        raw(field << 3 | 1)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    public mutating func bytes(_ field: UInt64, _ value: UnsafeRawBufferPointer) {
        guard !value.isEmpty else { return }
        raw(field << 3 | 2)
        raw(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    public mutating func bytes(_ field: UInt64, _ value: Data) {
        value.withUnsafeBytes { bytes(field, $0) }
    }

    public mutating func string(_ field: UInt64, _ value: String) {
        var value = value
        value.withUTF8 { bytes(field, UnsafeRawBufferPointer($0)) }
    }

    /// A nested message of two string fields, 1 and 2, written in place (no inner buffer).
    /// Nothing is written if both are empty.
    public mutating func message(_ field: UInt64, strings first: String, _ second: String) {
        let lengths = (first.utf8.count, second.utf8.count)
        func size(_ count: Int) -> Int { count == 0 ? 0 : 1 + Self.varintSize(UInt64(count)) + count }
        let inner = size(lengths.0) + size(lengths.1)
        guard inner > 0 else { return }
        raw(field << 3 | 2)
        raw(UInt64(inner))
        string(1, first)
        string(2, second)
    }

    /// How many bytes `value` takes as a varint.
    public static func varintSize(_ value: UInt64) -> Int {
        value == 0 ? 1 : (64 - value.leadingZeroBitCount + 6) / 7
    }

    /// A nested message; `body` writes its fields. Nothing is written if it writes none.
    public mutating func message(_ field: UInt64, _ body: (inout WireWriter) -> Void) {
        var inner = WireWriter(capacity: 64)
        body(&inner)
        guard !inner.bytes.isEmpty else { return }
        inner.bytes.withUnsafeBytes { bytes(field, $0) }
    }

    /// Appends bytes already encoded (fields written once and copied many times).
    public mutating func append(_ encoded: [UInt8]) {
        bytes.append(contentsOf: encoded)
    }

    /// What `body` writes, after its length as 4 bytes, little-endian (a publish batch's framing).
    public mutating func lengthPrefixed(_ body: (inout WireWriter) -> Void) {
        let start = bytes.count
        bytes.append(contentsOf: [0, 0, 0, 0])
        body(&self)
        let length = UInt32(truncatingIfNeeded: bytes.count - start - 4).littleEndian
        withUnsafeBytes(of: length) { length in
            for index in 0..<4 { bytes[start + index] = length[index] }
        }
    }

    /// Drops everything written after the first `count` bytes.
    public mutating func truncate(to count: Int) {
        bytes.removeSubrange(count...)
    }

    public mutating func raw(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }
}
