import Bus
import EventLog

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The answers the daemon gave to recent publish requests it refused for a full disk, so that
/// a retry of such a request gets the same answer instead of being decided again.
///
/// Without it, a producer's retry still in flight when its request was refused could be
/// committed once space is free, and an event answered REJECTED would be in the log. Other
/// answers need no remembering: deciding a retry again gives the same positions (as
/// `DUPLICATE`) or the same rejection.
/// Keyed by request id, and checked against a fingerprint of the request's envelopes, so that a
/// client that reuses a request id for other events is not given an old answer. Bounded in
/// entries and bytes; the oldest are forgotten first (a retry after that is decided again,
/// which the log's deduplication by event id keeps safe).
struct RequestAnswerCache {
    struct Fingerprint: Hashable {
        let count: Int
        let bytes: Int
        let edges: UInt32
    }

    private struct Entry {
        let fingerprint: Fingerprint
        let answer: Data
    }

    let maxEntries: Int
    let maxBytes: Int
    private var entries: [Data: Entry] = [:]
    private var order: [Data] = []
    private var oldest = 0
    private(set) var bytes = 0

    init(maxEntries: Int = 16_384, maxBytes: Int = 16 << 20) {
        self.maxEntries = max(1, maxEntries)
        self.maxBytes = maxBytes
    }

    /// What identifies a request's content: how many envelopes, how many bytes, and a checksum
    /// of the start of the first and the last (where their ids are).
    static func fingerprint(of envelopes: [Data]) -> Fingerprint {
        fingerprint(of: EnvelopeBatch(envelopes))
    }

    static func fingerprint(of batch: EnvelopeBatch) -> Fingerprint {
        batch.withBytes { bytes in
            var crc: UInt32 = 0
            if let first = batch.envelopes.first {
                crc = Checksum.crc32(UnsafeRawBufferPointer(rebasing: bytes[first.prefix(64)]))
            }
            if let last = batch.envelopes.last, batch.count > 1 {
                crc = Checksum.crc32(UnsafeRawBufferPointer(rebasing: bytes[last.prefix(64)]), continuing: crc)
            }
            return Fingerprint(count: batch.count, bytes: batch.byteCount, edges: crc)
        }
    }

    /// The answer given to this request before, if it is remembered.
    func answer(to requestID: Data, fingerprint: Fingerprint) -> Data? {
        guard let entry = entries[requestID], entry.fingerprint == fingerprint else { return nil }
        return entry.answer
    }

    /// Remembers an answer, forgetting the oldest beyond the bounds.
    mutating func remember(_ answer: Data, to requestID: Data, fingerprint: Fingerprint) {
        if let previous = entries.updateValue(Entry(fingerprint: fingerprint, answer: answer), forKey: requestID) {
            bytes -= previous.answer.count
        } else {
            order.append(requestID)
        }
        bytes += answer.count
        while order.count - oldest > maxEntries || bytes > maxBytes, oldest < order.count {
            if let forgotten = entries.removeValue(forKey: order[oldest]) { bytes -= forgotten.answer.count }
            oldest += 1
        }
        // Compact the queue now and then, so that it does not grow with every request ever seen.
        if oldest > 4096 && oldest * 2 > order.count {
            order.removeFirst(oldest)
            oldest = 0
        }
    }

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }
}
