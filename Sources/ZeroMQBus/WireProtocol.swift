import BureauSchemas
import Bus

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The bus's wire protocol, version `bureau/2`, as README's "Wire protocol" section documents it.
///
/// Requests (DEALER → ROUTER): `[version][verb][request id][arguments…]`; a publish request's
/// arguments are a batch of envelopes (``batch(_:)``) and, optionally, the id of the
/// request it must be stored after (answered `out-of-order`, nothing stored, if that one has not
/// reached the daemon): what lets a producer keep several requests in flight in order.
/// Replies (ROUTER → DEALER): `[version][reply verb][request id][results…]`.
/// Publications (PUB → SUB): `[type name][events of that type]` (``PublicationFrame``), and
/// `[_heartbeat][Heartbeat]`.
///
/// `bureau/2` moved from a frame per envelope and three per publication to batches, so that
/// what libzmq and both ends pay per message is paid per batch (BENCHMARKS-history.md, "Batches").
public enum WireProtocol {
    public static let version = "bureau/2"
    public static let heartbeatTopic = "_heartbeat"

    /// Request verbs.
    public static let publish = "publish"
    public static let read = "read"
    public static let ping = "ping"
    /// On the read socket: a consumer's progress (`ProgressReport`), not answered; and a
    /// request for the daemon's figures, answered `stats` (`BusStats`).
    public static let report = "report"
    public static let stats = "stats"
    /// Reply verbs.
    public static let ack = "ack"
    public static let events = "events"
    public static let pong = "pong"
    public static let error = "error"

    /// The request id frame's size.
    public static let requestIDBytes = 8
    // Error codes (`ErrorReply.code`) are `BusErrorCode`'s, in Bus: the in-memory twin answers them too.
    /// The most replies the read socket queues for a client that does not read them; later
    /// ones are dropped, and the client asks again (a read is idempotent).
    public static let maxQueuedReplies = 100
    // The sizes of requests, replies and live publications are the bus's: BusLimits.

    /// A request id frame: 8 bytes, little-endian.
    public static func requestID(_ value: UInt64) -> Data {
        withUnsafeBytes(of: value.littleEndian) { Data($0) }
    }

    public static func parseRequestID(_ frame: Data) -> UInt64? {
        guard frame.count == 8 else { return nil }
        return frame.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
    }

    /// A batch frame: each envelope as its length (4 bytes, little-endian) followed by its
    /// bytes, in order. A publish request's argument, and a batched read reply's envelopes.
    public static func batch(_ envelopes: [Data]) -> Data {
        // Written in one access to the frame: appending to a Data costs an exclusivity check
        // and a representation switch each time.
        var batch = Data(count: envelopes.reduce(0) { $0 + 4 + $1.count })
        batch.withUnsafeMutableBytes { target in
            var offset = 0
            for envelope in envelopes {
                target.storeBytes(
                    of: UInt32(truncatingIfNeeded: envelope.count).littleEndian, toByteOffset: offset, as: UInt32.self)
                offset += 4
                envelope.withUnsafeBytes { source in
                    UnsafeMutableRawBufferPointer(rebasing: target[offset..<offset + source.count]).copyMemory(
                        from: source)
                }
                offset += envelope.count
            }
        }
        return batch
    }

    /// The publish batches of `events`' envelopes, written straight into each batch frame (no
    /// envelope of its own to allocate and copy), split as ``BusLimits/requests(_:)`` splits
    /// envelopes: at most ``BusLimits/maxEnvelopesPerPublish`` envelopes and
    /// ``BusLimits/maxRequestBytes`` bytes a batch, unless one envelope alone is larger.
    public static func publishBatches(
        _ events: some Collection<OutgoingEvent>, process: String
    ) -> [(frame: Data, count: Int)] {
        func writer(for events: some Collection<OutgoingEvent>) -> WireWriter {
            // Sized from the first event: a producer's events are mostly alike.
            let each = events.first.map { $0.payload.count + $0.type.utf8.count + process.utf8.count + 96 } ?? 0
            let count = min(events.count, BusLimits.maxEnvelopesPerPublish)
            return WireWriter(capacity: min(BusLimits.maxRequestBytes, count * each))
        }
        var batches: [(frame: Data, count: Int)] = []
        var frame = writer(for: events)
        var envelopes = EnvelopeWriter(process: process)
        var count = 0
        for (index, event) in zip(events.indices, events) {
            if count == BusLimits.maxEnvelopesPerPublish {
                batches.append((Data(frame.bytes), count))
                frame = writer(for: events[index...])
                count = 0
            }
            let start = frame.bytes.count
            frame.lengthPrefixed { envelopes.write(event, to: &$0) }
            if count > 0 && frame.bytes.count > BusLimits.maxRequestBytes {
                // This envelope opens the next batch.
                frame.truncate(to: start)
                batches.append((Data(frame.bytes), count))
                frame = writer(for: events[index...])
                frame.lengthPrefixed { envelopes.write(event, to: &$0) }
                count = 0
            }
            count += 1
        }
        if count > 0 { batches.append((Data(frame.bytes), count)) }
        return batches
    }

    /// Why a batch frame cannot be split into envelopes.
    public enum BatchProblem: Error, Equatable {
        /// More envelopes than `limit`.
        case tooMany(limit: Int)
        /// Envelope `index` (from 1) says it has `declared` bytes where `remaining` are left.
        case cutShort(index: Int, declared: Int, remaining: Int)
        /// The frame ends inside envelope `index`'s 4-byte length.
        case lengthCutShort(index: Int, remaining: Int)
    }

    /// Splits a batch frame into its envelopes (slices of `batch`, not copies); at most
    /// `maxEnvelopes`, and none past the frame's end.
    public static func envelopes(inBatch batch: Data, maxEnvelopes: Int) -> Result<[Data], BatchProblem> {
        envelopeRanges(inBatch: batch, maxEnvelopes: maxEnvelopes).map { ranges in
            ranges.map { batch[batch.startIndex + $0.lowerBound..<batch.startIndex + $0.upperBound] }
        }
    }

    /// Where each envelope of a batch frame lies, counted from the batch's first byte; at
    /// most `maxEnvelopes`, and none past the frame's end.
    public static func envelopeRanges(
        inBatch batch: Data, maxEnvelopes: Int
    ) -> Result<[Range<Int>], BatchProblem> {
        batch.withUnsafeBytes { bytes in
            var ranges: [Range<Int>] = []
            var offset = 0
            while offset < bytes.count {
                guard ranges.count < maxEnvelopes else { return .failure(.tooMany(limit: maxEnvelopes)) }
                let remaining = bytes.count - offset
                guard remaining >= 4 else {
                    return .failure(.lengthCutShort(index: ranges.count + 1, remaining: remaining))
                }
                let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                guard length <= remaining - 4 else {
                    return .failure(.cutShort(index: ranges.count + 1, declared: length, remaining: remaining - 4))
                }
                ranges.append(offset + 4..<offset + 4 + length)
                offset += 4 + length
            }
            return .success(ranges)
        }
    }
}

extension WireProtocol.BatchProblem: CustomStringConvertible {
    public var description: String {
        switch self {
        case .tooMany(let limit):
            "a batch carries at most \(limit) envelopes"
        case .cutShort(let index, let declared, let remaining):
            "the batch is cut short: envelope \(index) says \(declared) bytes, but \(remaining) follow"
        case .lengthCutShort(let index, let remaining):
            "the batch is cut short: envelope \(index)'s length takes 4 bytes, but \(remaining) follow"
        }
    }
}
