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
    /// Byte range of field 4 (the commit time, a `google.protobuf.Timestamp`).
    public var commitTimeRange: Range<Int>?
    /// Whether field 4 (commit time) is present.
    public var hasCommitTime: Bool { commitTimeRange != nil }
    /// Field 6 (the causing event's position), if present.
    public var causation: UInt64?
    /// Byte range of field 7 (the correlation id).
    public var correlationRange: Range<Int>?
    /// Field 9 (the span that published the event, when its chain is traced), if present.
    public var traceParent: UInt64?
}

/// Why bytes are not an envelope, and at which byte.
public struct EnvelopeScanError: Error, Equatable, CustomStringConvertible {
    public let offset: Int
    public let reason: String

    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "malformed envelope at byte \(offset): \(reason)" }
}

public enum EnvelopeScanner {
    public static func scan(_ bytes: UnsafeRawBufferPointer) throws(EnvelopeScanError) -> EnvelopeHeader {
        var header = EnvelopeHeader()
        var reader = WireReader(bytes)
        while !reader.isAtEnd {
            let start = reader.offset
            let (field, value) = try reader.next()
            switch (field, value) {
            case (1, .varint(let position)): header.position = position
            case (2, .bytes(let range)): header.idRange = range
            case (3, .bytes(let range)): header.typeRange = range
            case (4, .bytes(let range)): header.commitTimeRange = range
            case (6, .varint(let causation)): header.causation = causation
            case (7, .bytes(let range)): header.correlationRange = range
            case (9, .fixed64(let span)): header.traceParent = span
            case (5, .bytes), (8, .bytes): break
            case (1, _), (6, _):
                throw EnvelopeScanError(offset: start, reason: "field \(field) should be a varint")
            case (2, _), (3, _), (4, _), (5, _), (7, _), (8, _):
                throw EnvelopeScanError(offset: start, reason: "field \(field) should be length-delimited")
            case (9, _):
                throw EnvelopeScanError(offset: start, reason: "field 9 should be a fixed64")
            default: break
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

    /// The seconds and nanoseconds of the `google.protobuf.Timestamp` at `range` of `bytes`.
    public static func timestamp(
        in bytes: UnsafeRawBufferPointer, at range: Range<Int>
    ) throws(EnvelopeScanError) -> (seconds: Int64, nanos: Int32) {
        var reader = WireReader(bytes, range: range)
        var time: (seconds: Int64, nanos: Int32) = (0, 0)
        while !reader.isAtEnd {
            let start = reader.offset
            switch try reader.next() {
            case (1, .varint(let seconds)): time.seconds = Int64(bitPattern: seconds)
            case (2, .varint(let nanos)):
                guard let nanos = Int32(exactly: Int64(bitPattern: nanos)), (0..<1_000_000_000).contains(nanos) else {
                    throw EnvelopeScanError(offset: start, reason: "the commit time's nanoseconds are out of range")
                }
                time.nanos = nanos
            case (1, _), (2, _):
                throw EnvelopeScanError(offset: start, reason: "a timestamp field should be a varint")
            default: break
            }
        }
        return time
    }
}

/// Writes the fields the bus daemon adds to a producer's envelope: position (field 1) and
/// commit time (field 4). Appended to the producer's bytes, protobuf decoders read the
/// concatenation as one message.
///
/// The commit time is encoded once per batch; only the position differs per event.
public struct EnvelopeStamp: Sendable {
    /// Field 4, encoded: tag, length, then the Timestamp's seconds and nanos.
    private let time: [UInt8]

    public init(seconds: Int64, nanos: Int32) {
        var inner: [UInt8] = []
        if seconds != 0 {
            inner.append(0x08)
            EnvelopeStamp.appendVarint(UInt64(bitPattern: seconds), to: &inner)
        }
        if nanos != 0 {
            inner.append(0x10)
            EnvelopeStamp.appendVarint(UInt64(bitPattern: Int64(nanos)), to: &inner)
        }
        var time: [UInt8] = [0x22]
        EnvelopeStamp.appendVarint(UInt64(inner.count), to: &time)
        self.time = time + inner
    }

    /// The most bytes a stamp adds to an envelope.
    public var maxBytes: Int { 1 + 10 + time.count }

    /// Appends `envelope` with the stamp for `position` to `bytes`.
    public func append(_ envelope: UnsafeRawBufferPointer, position: UInt64, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: envelope)
        bytes.append(0x08)
        EnvelopeStamp.appendVarint(position, to: &bytes)
        bytes.append(contentsOf: time)
    }

    /// The envelope with the stamp for `position` appended.
    public func stamped(_ envelope: Data, position: UInt64) -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(envelope.count + maxBytes)
        envelope.withUnsafeBytes { append($0, position: position, to: &bytes) }
        return Data(bytes)
    }

    /// Appends `value` as a protobuf varint.
    public static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }
}
