import BureauSchemas

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Encodes a `bureau.bus.PublishAck` by hand: the daemon sends one per request, with a result
/// per event, and generated encoding costs an allocation per result.
enum PublishAckEncoding {
    /// The same bytes SwiftProtobuf would write for `PublishAck { results, head }`.
    static func encode(_ results: [Bureau_Bus_PublishResult], head: UInt64) -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(results.count * 8 + 12)
        for result in results {
            let status = UInt64(result.status.rawValue)
            let reason = Array(result.reason.utf8)
            var length = 0
            if status != 0 { length += 1 + varintSize(status) }
            if result.position != 0 { length += 1 + varintSize(result.position) }
            if !reason.isEmpty { length += 1 + varintSize(UInt64(reason.count)) + reason.count }
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

    static func varintSize(_ value: UInt64) -> Int {
        var size = 1
        var value = value >> 7
        while value != 0 {
            size += 1
            value >>= 7
        }
        return size
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
