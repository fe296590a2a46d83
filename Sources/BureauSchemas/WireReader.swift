/// Reads protobuf's binary wire format field by field, without allocating.
///
/// For the few hot paths (the bus daemon, envelope decoding) where generated decoding costs
/// too much; everything else uses SwiftProtobuf.
public struct WireReader {
    public enum Value {
        case varint(UInt64)
        case fixed64(UInt64)
        case bytes(Range<Int>)
        case fixed32(UInt32)
    }

    public let bytes: UnsafeRawBufferPointer
    public private(set) var offset: Int

    public init(_ bytes: UnsafeRawBufferPointer, range: Range<Int>? = nil) {
        self.bytes = bytes
        offset = range?.lowerBound ?? 0
        end = range?.upperBound ?? bytes.count
    }

    /// Where reading stops: the end of the range given, or of the bytes.
    let end: Int

    public var isAtEnd: Bool { offset >= end }

    /// The next field's number and value; throws if the bytes are not well formed.
    public mutating func next() throws(EnvelopeScanError) -> (field: UInt64, value: Value) {
        let start = offset
        let tag = try varint()
        let field = tag >> 3
        guard field > 0, field <= 536_870_911 else {
            throw EnvelopeScanError(offset: start, reason: "field number \(field) is not valid")
        }
        switch tag & 7 {
        case 0:
            return (field, .varint(try varint()))
        case 1:
            guard offset + 8 <= end else {
                throw EnvelopeScanError(offset: start, reason: "field \(field) is cut short")
            }
            defer { offset += 8 }
            return (field, .fixed64(UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))))
        case 2:
            let length = try varint()
            guard length <= UInt64(end - offset) else {
                throw EnvelopeScanError(
                    offset: start, reason: "field \(field) claims \(length) bytes but \(end - offset) remain")
            }
            let range = offset..<offset + Int(length)
            offset = range.upperBound
            return (field, .bytes(range))
        case 5:
            guard offset + 4 <= end else {
                throw EnvelopeScanError(offset: start, reason: "field \(field) is cut short")
            }
            defer { offset += 4 }
            return (field, .fixed32(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))))
        default:
            throw EnvelopeScanError(offset: start, reason: "wire type \(tag & 7) of field \(field) is not valid")
        }
    }

    /// The next field, read here when its tag and its value (a varint) or length each take one
    /// byte: a field numbered 1 to 15 holding a number under 128 or fewer than 128 bytes, as
    /// most fields of an event's payload do; nil, having read nothing, for any other (``next()``
    /// reads it, or says what is wrong). Inlined into the caller's loop, where ``next()`` is a
    /// call and a varint loop for each of those bytes.
    @inline(__always)
    mutating func nextShort() -> (field: UInt64, value: Value)? {
        guard end - offset >= 2 else { return nil }
        let tag = bytes[offset]
        let second = bytes[offset + 1]
        // Both bytes without their continuation bit, and a field number other than 0.
        guard (tag | second) & 0x80 == 0, tag >= 8 else { return nil }
        switch tag & 7 {
        case 0:
            offset += 2
            return (UInt64(tag >> 3), .varint(UInt64(second)))
        case 2:
            let start = offset + 2
            guard Int(second) <= end - start else { return nil }
            offset = start + Int(second)
            return (UInt64(tag >> 3), .bytes(start..<offset))
        default:
            return nil
        }
    }

    mutating func varint() throws(EnvelopeScanError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        let start = offset
        while true {
            guard offset < end else { throw EnvelopeScanError(offset: start, reason: "varint is cut short") }
            let byte = bytes[offset]
            offset += 1
            guard shift < 64 else { throw EnvelopeScanError(offset: start, reason: "varint is longer than 10 bytes") }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }
}
