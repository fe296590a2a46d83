import BureauSchemas
import Bus
import SwiftProtobuf

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Encodes and decodes a `bureau.bus.PublishAck` by hand: the daemon sends one per request,
/// with a result per event, and generated code costs an allocation per result either way.
enum PublishAckEncoding {
    /// What SwiftProtobuf would decode from `data`, unknown fields skipped rather than kept;
    /// nil if the bytes are not a well-formed `PublishAck`.
    ///
    /// The fast path reads the shape the daemon writes; anything else (a known field with
    /// another wire type, a group, broken bytes) is left to SwiftProtobuf, whose rules then
    /// decide.
    static func decode(_ data: Data) -> Bureau_Bus_PublishAck? {
        if let ack = decodeDaemonShape(data) { return ack }
        guard var ack = try? Bureau_Bus_PublishAck(serializedBytes: data) else { return nil }
        ack.unknownFields = UnknownStorage()
        for index in ack.results.indices { ack.results[index].unknownFields = UnknownStorage() }
        return ack
    }

    private static func decodeDaemonShape(_ data: Data) -> Bureau_Bus_PublishAck? {
        data.withUnsafeBytes { bytes in
            var ack = Bureau_Bus_PublishAck()
            var reader = WireReader(bytes)
            do {
                while !reader.isAtEnd {
                    switch try reader.next() {
                    case (1, .bytes(let range)):
                        ack.results.append(try decodeResult(WireReader(bytes, range: range)))
                    case (2, .varint(let head)):
                        ack.head = head
                    case (1, _), (2, _):
                        return nil
                    default:
                        continue
                    }
                }
            } catch {
                return nil
            }
            return ack
        }
    }

    private static func decodeResult(_ reader: WireReader) throws -> Bureau_Bus_PublishResult {
        var reader = reader
        var result = Bureau_Bus_PublishResult()
        while !reader.isAtEnd {
            switch try reader.next() {
            case (1, .varint(let status)):
                let raw = Int(Int32(truncatingIfNeeded: status))
                result.status = Bureau_Bus_PublishResult.Status(rawValue: raw) ?? .UNRECOGNIZED(raw)
            case (2, .varint(let position)):
                result.position = position
            case (3, .bytes(let range)):
                guard let reason = String(validating: reader.bytes[range], as: UTF8.self) else {
                    throw EnvelopeScanError(offset: range.lowerBound, reason: "the reason is not UTF-8")
                }
                result.reason = reason
            case (1, _), (2, _), (3, _):
                throw EnvelopeScanError(offset: reader.offset, reason: "a result field has the wrong wire type")
            default:
                continue
            }
        }
        return result
    }

    /// The same bytes SwiftProtobuf would write for `PublishAck { results, head }`.
    static func encode(_ results: [Bureau_Bus_PublishResult], head: UInt64) -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(results.count * 8 + 12)
        for result in results {
            let status = UInt64(result.status.rawValue)
            let reason = Array(result.reason.utf8)
            var length = 0
            if status != 0 { length += 1 + WireWriter.varintSize(status) }
            if result.position != 0 { length += 1 + WireWriter.varintSize(result.position) }
            if !reason.isEmpty { length += 1 + WireWriter.varintSize(UInt64(reason.count)) + reason.count }
            bytes.append(0x0A)
            appendVarint(UInt64(length), to: &bytes)
            if status != 0 {
                bytes.append(0x08)
                appendVarint(status, to: &bytes)
            }
            if result.position != 0 {
                bytes.append(0x10)
                appendVarint(result.position, to: &bytes)
            }
            if !reason.isEmpty {
                bytes.append(0x1A)
                appendVarint(UInt64(reason.count), to: &bytes)
                bytes += reason
            }
        }
        if head != 0 {
            bytes.append(0x10)
            appendVarint(head, to: &bytes)
        }
        return Data(bytes)
    }

    static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        EnvelopeStamp.appendVarint(value, to: &bytes)
    }
}
