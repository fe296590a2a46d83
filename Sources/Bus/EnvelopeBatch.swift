#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The envelopes of one publish request: the request's bytes and where each envelope lies in
/// them, so that the sequencer reads every envelope through one look at one buffer rather
/// than through a `Data` of its own (a reference count and an exclusive access each).
package struct EnvelopeBatch: Sendable {
    package let bytes: Data
    /// Each envelope's offsets, counted from the first byte of ``bytes``.
    package let envelopes: [Range<Int>]

    package init(bytes: Data, envelopes: [Range<Int>]) {
        self.bytes = bytes
        self.envelopes = envelopes
    }

    /// Envelopes given one by one (tests, the daemon's own reports), copied into one buffer.
    package init(_ envelopes: [Data]) {
        var bytes = Data()
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(envelopes.count)
        for envelope in envelopes {
            ranges.append(bytes.count..<bytes.count + envelope.count)
            bytes.append(envelope)
        }
        self.init(bytes: bytes, envelopes: ranges)
    }

    package var count: Int { envelopes.count }

    /// The bytes of every envelope.
    package var byteCount: Int { envelopes.reduce(0) { $0 + $1.count } }

    /// Calls `body` with the request's bytes, in which each of ``envelopes`` lies.
    package func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try bytes.withUnsafeBytes(body)
    }
}
