#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The sizes every bus keeps to, whatever carries it (README, "Limits").
public enum BusLimits {
    /// The most envelopes one publish request may carry.
    public static let maxEnvelopesPerPublish = 4096
    /// The largest envelope the bus accepts, in bytes.
    public static let maxEnvelopeBytes = 1 << 20
    /// The most bytes one publish request's batch may hold, in all (each envelope and its
    /// 4-byte length).
    public static let maxRequestBytes = 8 << 20
    /// The bytes a publish batch adds to each envelope: its length.
    public static let batchBytesPerEnvelope = 4
    /// The caps on one read of the log (it may pass `maxReadBytes` by one event).
    public static let maxReadEvents = 4096
    public static let maxReadBytes = 1 << 20
    /// The most records one filtered read examines, so that it answers in bounded time.
    public static let maxReadScan = 65_536
    /// Events larger than this are published as a notice that subscribers fill from the log.
    public static let maxLiveEnvelopeBytes = 4096
    /// The most bytes of events one live publication message holds (many events of one type
    /// travel as one message; see the wire protocol).
    public static let maxPublicationFrameBytes = 32 << 10

    /// Splits envelopes into requests within the limits (count and bytes), keeping their order.
    public static func requests(_ envelopes: [Data]) -> [[Data]] {
        var requests: [[Data]] = []
        var current: [Data] = []
        var bytes = 0
        for envelope in envelopes {
            let size = batchBytesPerEnvelope + envelope.count
            if !current.isEmpty && (current.count == maxEnvelopesPerPublish || bytes + size > maxRequestBytes) {
                requests.append(current)
                current = []
                bytes = 0
            }
            current.append(envelope)
            bytes += size
        }
        if !current.isEmpty { requests.append(current) }
        return requests
    }
}
