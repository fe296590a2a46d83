#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads the few envelope fields the bus needs straight from the protobuf bytes.
///
/// The bus daemon checks every envelope it receives and the catch-up server filters by type;
/// decoding whole envelopes there would cost an allocation per field. The scanner walks the
/// top-level fields once, checks their wire format and keeps offsets into the bytes.
public struct EnvelopeHeader: Equatable, Sendable {
    /// Field 1, if present.
    public var position: UInt64?
    /// Byte range of field 2 (the id).
    public var idRange: Range<Int>?
    /// Byte range of field 3 (the type name).
    public var typeRange: Range<Int>?
    /// Whether field 4 (commit time) is present.
    public var hasCommitTime = false
}

/// Why bytes are not an envelope, and at which byte.
public struct EnvelopeScanError: Error, Equatable, CustomStringConvertible {
    public let offset: Int
    public let reason: String
    public var description: String { "malformed envelope at byte \(offset): \(reason)" }
}

public enum EnvelopeScanner {
    public static func scan(_ bytes: UnsafeRawBufferPointer) throws(EnvelopeScanError) -> EnvelopeHeader {
        var header = EnvelopeHeader()
        var offset = 0
        while offset < bytes.count {
            let fieldStart = offset
            let tag = try varint(bytes, &offset)
            let field = tag >> 3
            let wireType = tag & 7
            guard field > 0, field <= 536_870_911 else {
                throw EnvelopeScanError(offset: fieldStart, reason: "field number \(field) is not valid")
            }
            switch wireType {
            case 0:
                let value = try varint(bytes, &offset)
                if field == 1 { header.position = value }
                if [2, 3, 4, 5, 7, 8].contains(field) {
                    throw EnvelopeScanError(offset: fieldStart, reason: "field \(field) should be length-delimited")
                }
            case 1:
                guard offset + 8 <= bytes.count else {
                    throw EnvelopeScanError(offset: fieldStart, reason: "field \(field) is cut short")
                }
                offset += 8
            case 2:
                let length = try varint(bytes, &offset)
                guard length <= UInt64(bytes.count - offset) else {
                    throw EnvelopeScanError(
                        offset: fieldStart,
                        reason: "field \(field) claims \(length) bytes but \(bytes.count - offset) remain")
                }
                let range = offset..<offset + Int(length)
                switch field {
                case 1, 6: throw EnvelopeScanError(offset: fieldStart, reason: "field \(field) should be a varint")
                case 2: header.idRange = range
                case 3: header.typeRange = range
                case 4: header.hasCommitTime = true
                default: break
                }
                offset = range.upperBound
            case 5:
                guard offset + 4 <= bytes.count else {
                    throw EnvelopeScanError(offset: fieldStart, reason: "field \(field) is cut short")
                }
                offset += 4
            default:
                throw EnvelopeScanError(
                    offset: fieldStart, reason: "wire type \(wireType) of field \(field) is not valid")
            }
        }
        return header
    }

    public static func scan(_ data: Data) throws(EnvelopeScanError) -> EnvelopeHeader {
        do {
            return try data.withUnsafeBytes { raw in try scan(raw) }
        } catch let error as EnvelopeScanError {
            throw error
        } catch {
            throw EnvelopeScanError(offset: 0, reason: "\(error)")
        }
    }

    /// The type name in `data`, if it has one.
    public static func typeName(in data: Data) -> String? {
        guard let header = try? scan(data), let range = header.typeRange else { return nil }
        return String(
            decoding: data[data.startIndex + range.lowerBound..<data.startIndex + range.upperBound], as: UTF8.self)
    }

    static func varint(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) throws(EnvelopeScanError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        let start = offset
        while true {
            guard offset < bytes.count else { throw EnvelopeScanError(offset: start, reason: "varint is cut short") }
            let byte = bytes[offset]
            offset += 1
            guard shift < 64 else { throw EnvelopeScanError(offset: start, reason: "varint is longer than 10 bytes") }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }
}

/// Writes the fields the bus daemon adds to a producer's envelope.
public enum EnvelopeStamp {
    /// Field 1 (position) and field 4 (commit time), encoded to be appended to an envelope:
    /// protobuf decoders read the concatenation as one message.
    public static func fields(position: UInt64, seconds: Int64, nanos: Int32) -> [UInt8] {
        var bytes: [UInt8] = [0x08]
        appendVarint(position, to: &bytes)
        var time: [UInt8] = []
        if seconds != 0 {
            time.append(0x08)
            appendVarint(UInt64(bitPattern: seconds), to: &time)
        }
        if nanos != 0 {
            time.append(0x10)
            appendVarint(UInt64(bitPattern: Int64(nanos)), to: &time)
        }
        bytes.append(0x22)
        appendVarint(UInt64(time.count), to: &bytes)
        bytes += time
        return bytes
    }

    static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }
}
