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

    /// The most envelopes one publish request may carry.
    public static let maxEnvelopesPerPublish = 4096
    /// The largest envelope the bus accepts, in bytes.
    public static let maxEnvelopeBytes = 1 << 20
    /// The most bytes of envelopes one publish request may carry, in all: a larger request is
    /// refused whole, its frames read and dropped, so what the daemon holds stays bounded.
    public static let maxRequestBytes = 8 << 20
    /// The request id frame's size.
    public static let requestIDBytes = 8
    /// The most replies the read socket queues for a client that does not read them; later
    /// ones are dropped, and the client asks again (a read is idempotent).
    public static let maxQueuedReplies = 100
    /// The caps on one read reply (it may pass `maxReadBytes` by one event).
    public static let maxReadEvents = 4096
    public static let maxReadBytes = 1 << 20
    /// Events larger than this are published as a notice: the topic and meta frames with an
    /// empty envelope frame, and subscribers read the event from the log. A subscriber's queue
    /// in the daemon (`publish-hwm` publications) then holds at most this much per publication.
    public static let maxLiveEnvelopeBytes = 4096
    /// The most records one read request examines when it filters by type, so that a
    /// filtered read over a long log answers in bounded time and reports its progress.
    public static let maxReadScan = 65_536

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
