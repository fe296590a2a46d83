import BureauSchemas
import EventLog
import SwiftProtobuf

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A committed event: the envelope's fields, decoded, with the payload still encoded.
public struct StoredEvent: Sendable, Equatable {
    public var position: UInt64
    public var id: EventID
    /// The payload's full protobuf name, e.g. "bureau.watchlist.PairAdded".
    public var type: String
    public var commitTime: CommitTime
    public var producerProcess: String
    public var producerModule: String
    /// The position of the event that caused this one; 0 for none.
    public var causation: UInt64
    /// The id of the user intent that started this chain.
    public var correlation: EventID
    public var payload: Data
    /// How this event was read, when not as stored: upcast from an older shape, or an upcast that
    /// failed (``EventUpcasting``). Nil for an event read as stored.
    public var upcast: Upcast?

    /// What ``EventUpcasting`` did to an event.
    /// Indirect: an event carries one pointer for it, nil for almost every event.
    public indirect enum Upcast: Sendable, Equatable {
        /// Stored as `storedType`, an older shape, and read as today's ``StoredEvent/type`` through
        /// `steps` upcasters.
        case upcast(storedType: String, steps: Int)
        /// Stored as `storedType`; the upcaster `upcaster` failed with `reason`. ``StoredEvent/type``
        /// is the type it was to become and the payload is as stored: reading it as that type
        /// throws, so whatever reads it reports it as a malformed input.
        case failed(storedType: String, upcaster: String, reason: String)
    }
    /// The span that published it, when its chain is traced; 0 otherwise. See ``TraceParent``.
    public var traceParent: UInt64

    public init(
        position: UInt64, id: EventID, type: String, commitTime: CommitTime, producerProcess: String = "",
        producerModule: String = "", causation: UInt64 = 0, correlation: EventID = .zero, payload: Data,
        traceParent: UInt64 = 0
    ) {
        self.position = position
        self.id = id
        self.type = type
        self.commitTime = commitTime
        self.producerProcess = producerProcess
        self.producerModule = producerModule
        self.causation = causation
        self.correlation = correlation
        self.payload = payload
        self.traceParent = traceParent
    }

    /// Decodes an envelope as stored in the log or published on the bus.
    ///
    /// A hand-written decoder (the envelope is read on every hot path: subscribers, replay,
    /// projections) with protobuf's semantics: the last value of a scalar field wins, and
    /// repeated occurrences of a message field merge; unknown fields are skipped.
    public init(envelopeBytes: Data) throws(BusError) {
        self = try Self.decoding(envelopeBytes) { String(decoding: $0, as: UTF8.self) }
    }

    /// Decodes an envelope as ``init(envelopeBytes:)`` does, taking its type name from `names`
    /// when it is there: for decoding a stream of envelopes.
    public init(envelopeBytes: Data, names: inout TypeNameCache) throws(BusError) {
        self = try Self.decoding(envelopeBytes) { names.name($0) }
    }

    // Inlined, with decode, into each initializer: the event returned through them was copied
    // whole at each step, and at 144 bytes each copy is a call to memmove (`bureau-bench
    // fold`: envelope decode 219–229 → 208–212 ns an event).
    @inline(__always)
    private static func decoding(
        _ envelopeBytes: Data, typeName: (UnsafeRawBufferPointer) -> String
    ) throws(BusError) -> StoredEvent {
        do {
            return try envelopeBytes.withUnsafeBytes { raw throws(EnvelopeScanError) in
                try decode(raw, data: envelopeBytes, typeName: typeName)
            }
        } catch let error as EnvelopeScanError {
            throw BusError.malformedEnvelope(error.description)
        } catch {
            throw BusError.malformedEnvelope("\(error)")
        }
    }

    // The fields are decoded into locals and the event made once at the end: assigning each
    // to an event made first released and retained its strings and payload again.
    @inline(__always)
    private static func decode(
        _ raw: UnsafeRawBufferPointer, data: Data, typeName: (UnsafeRawBufferPointer) -> String
    ) throws(EnvelopeScanError) -> StoredEvent {
        var position: UInt64 = 0
        var id = EventID.zero
        var type: Range<Int>?
        var commitTime = CommitTime.zero
        var process: Range<Int>?
        var module: Range<Int>?
        var causation: UInt64 = 0
        var correlation = EventID.zero
        var payload: Range<Int>?
        var traceParent: UInt64 = 0
        var reader = WireReader(raw)
        while !reader.isAtEnd {
            let start = reader.offset
            switch try reader.next() {
            case (1, .varint(let value)): position = value
            case (2, .bytes(let range)):
                id = EventID(bytes: UnsafeRawBufferPointer(rebasing: raw[range])) ?? .zero
            case (3, .bytes(let range)): type = range
            case (4, .bytes(let range)):
                var inner = WireReader(raw, range: range)
                while !inner.isAtEnd {
                    switch try inner.next() {
                    case (1, .varint(let seconds)): commitTime.seconds = Int64(bitPattern: seconds)
                    case (2, .varint(let nanos)): commitTime.nanos = Int32(truncatingIfNeeded: nanos)
                    default: break
                    }
                }
            case (5, .bytes(let range)):
                var inner = WireReader(raw, range: range)
                while !inner.isAtEnd {
                    switch try inner.next() {
                    case (1, .bytes(let text)): process = text
                    case (2, .bytes(let text)): module = text
                    default: break
                    }
                }
            case (6, .varint(let value)): causation = value
            case (7, .bytes(let range)):
                correlation = EventID(bytes: UnsafeRawBufferPointer(rebasing: raw[range])) ?? .zero
            case (8, .bytes(let range)): payload = range
            case (9, .fixed64(let span)): traceParent = span
            case (let field, _) where field <= 9:
                throw EnvelopeScanError(offset: start, reason: "field \(field) has the wrong wire type")
            default: break
            }
        }
        func string(_ range: Range<Int>?) -> String {
            range.map { String(decoding: UnsafeRawBufferPointer(rebasing: raw[$0]), as: UTF8.self) } ?? ""
        }
        return StoredEvent(
            position: position, id: id, type: type.map { typeName(UnsafeRawBufferPointer(rebasing: raw[$0])) } ?? "",
            commitTime: commitTime, producerProcess: string(process), producerModule: string(module),
            causation: causation, correlation: correlation,
            payload: payload.map { range in
                range.count <= inlinePayloadBytes
                    ? Data(UnsafeRawBufferPointer(rebasing: raw[range]))
                    : data[data.startIndex + range.lowerBound..<data.startIndex + range.upperBound]
            } ?? Data(), traceParent: traceParent)
    }

    /// The longest payload kept in the event itself rather than as a slice of the envelope's
    /// bytes: what a `Data` holds inline on a 64-bit machine, with no buffer to share. Every
    /// copy of a slice counts a reference on the buffer, and every read of its bytes makes a
    /// run-time exclusivity check (`swift_beginAccess`, about a twentieth of replay's folding
    /// thread); an inline copy does neither, and costs no allocation to make. Many events'
    /// payloads are this short: a request naming a currency pair is 10 bytes.
    private static let inlinePayloadBytes = 14

    /// The module part of the type name's package: "watchlist" for "bureau.watchlist.PairAdded".
    public var module: Substring { TypeName.shortName(of: String(TypeName.package(of: type))) }

    /// Decodes the payload as `M`; nil if the event is not of that type.
    ///
    /// Inlinable so that a projection calls `M`'s own decoding (``PayloadDecodable``) directly.
    @inlinable
    public func payload<M: PayloadDecodable>(as type: M.Type) throws -> M? {
        guard self.type == M.protoMessageName else { return nil }
        try throwIfUpcastFailed()
        return try M(payloadBytes: payload)
    }

    /// Throws ``upcastFailure`` if this event's upcast failed: what reading it as its type does.
    /// The test of `upcast` is inlined; the failure is made, by a call, only for an upcast event.
    @inlinable
    func throwIfUpcastFailed() throws(UpcastFailure) {
        if upcast != nil, let failure = upcastFailure { throw failure }
    }

    /// Why an event whose upcast failed cannot be read as its type; nil for any other.
    public var upcastFailure: UpcastFailure? {
        guard case .failed(let stored, let upcaster, let reason) = upcast else { return nil }
        return UpcastFailure(position: position, storedType: stored, type: type, upcaster: upcaster, reason: reason)
    }

    /// Decodes the payload as `M`, a message type that is not one of the schemas' (so not
    /// ``PayloadDecodable``), with swift-protobuf; nil if the event is not of that type.
    public func payload<M: SwiftProtobuf.Message>(as type: M.Type) throws -> M? {
        guard self.type == M.protoMessageName else { return nil }
        try throwIfUpcastFailed()
        return try M(serializedBytes: payload)
    }

    /// Encodes the envelope again (positions and commit time included), e.g. to export it.
    public func envelope() -> Bureau_Envelope {
        var envelope = Bureau_Envelope()
        envelope.position = position
        envelope.id = Data(id.bytes)
        envelope.type = type
        envelope.commitTime = Google_Protobuf_Timestamp(seconds: commitTime.seconds, nanos: commitTime.nanos)
        envelope.producer.process = producerProcess
        envelope.producer.module = producerModule
        envelope.causation = causation
        envelope.correlation = Data(correlation.bytes)
        envelope.payload = payload
        envelope.traceParent = traceParent
        return envelope
    }
}
