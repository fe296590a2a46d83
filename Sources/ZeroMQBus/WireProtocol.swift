import Bus

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The bus's wire protocol, version `bureau/1`, as README's "Wire protocol" section documents it.
///
/// Requests (DEALER → ROUTER): `[version][verb][request id][arguments…]`.
/// Replies (ROUTER → DEALER): `[version][reply verb][request id][results…]`.
/// Publications (PUB → SUB): `[type name][meta][envelope]`, and `[_heartbeat][Heartbeat]`.
public enum WireProtocol {
    public static let version = "bureau/1"
    public static let heartbeatTopic = "_heartbeat"

    /// Request verbs.
    public static let publish = "publish"
    public static let read = "read"
    public static let ping = "ping"
    /// Reply verbs.
    public static let ack = "ack"
    public static let events = "events"
    public static let pong = "pong"
    public static let error = "error"

    /// The request id frame's size.
    public static let requestIDBytes = 8
    /// The most replies the read socket queues for a client that does not read them; later
    /// ones are dropped, and the client asks again (a read is idempotent).
    public static let maxQueuedReplies = 100
    // The sizes of requests, replies and live publications are the bus's: BusLimits.

    /// The 16-byte meta frame of a publication: the position, and the position of the
    /// previous event of the same package (see README, "No silent loss").
    public static func meta(position: UInt64, previousInPackage: UInt64) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 16)
        bytes.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: position.littleEndian, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: previousInPackage.littleEndian, toByteOffset: 8, as: UInt64.self)
        }
        return bytes
    }

    /// Reads a meta frame; nil unless it is 16 bytes.
    public static func parseMeta(_ frame: some ContiguousBytes) -> (position: UInt64, previousInPackage: UInt64)? {
        frame.withUnsafeBytes { raw in
            guard raw.count == 16 else { return nil }
            return (
                UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }
    }

    /// A request id frame: 8 bytes, little-endian.
    public static func requestID(_ value: UInt64) -> Data {
        withUnsafeBytes(of: value.littleEndian) { Data($0) }
    }

    public static func parseRequestID(_ frame: Data) -> UInt64? {
        guard frame.count == 8 else { return nil }
        return frame.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
    }
}
