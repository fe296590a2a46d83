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

    public init(
        position: UInt64, id: EventID, type: String, commitTime: CommitTime, producerProcess: String = "",
        producerModule: String = "", causation: UInt64 = 0, correlation: EventID = .zero, payload: Data
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
    }

    /// Decodes an envelope as stored in the log or published on the bus.
    ///
    /// A hand-written decoder (the envelope is read on every hot path: subscribers, replay,
    /// projections) with protobuf's semantics: the last value of a scalar field wins, and
    /// repeated occurrences of a message field merge; unknown fields are skipped.
    public init(envelopeBytes: Data) throws(BusError) {
        do {
            self = try envelopeBytes.withUnsafeBytes { raw throws(EnvelopeScanError) in
                try StoredEvent.decode(raw, data: envelopeBytes)
            }
        } catch let error as EnvelopeScanError {
            throw BusError.malformedEnvelope(error.description)
        } catch {
            throw BusError.malformedEnvelope("\(error)")
        }
    }

    private static func decode(_ raw: UnsafeRawBufferPointer, data: Data) throws(EnvelopeScanError) -> StoredEvent {
        var event = StoredEvent(position: 0, id: .zero, type: "", commitTime: .zero, payload: Data())
        func slice(_ range: Range<Int>) -> Data {
            data[data.startIndex + range.lowerBound..<data.startIndex + range.upperBound]
        }
        func string(_ range: Range<Int>) -> String {
            String(decoding: UnsafeRawBufferPointer(rebasing: raw[range]), as: UTF8.self)
        }
        var reader = WireReader(raw)
        while !reader.isAtEnd {
            let start = reader.offset
            switch try reader.next() {
            case (1, .varint(let value)): event.position = value
            case (2, .bytes(let range)):
                event.id = EventID(bytes: UnsafeRawBufferPointer(rebasing: raw[range])) ?? .zero
            case (3, .bytes(let range)): event.type = string(range)
            case (4, .bytes(let range)):
                var inner = WireReader(raw, range: range)
                while !inner.isAtEnd {
                    switch try inner.next() {
                    case (1, .varint(let seconds)): event.commitTime.seconds = Int64(bitPattern: seconds)
                    case (2, .varint(let nanos)): event.commitTime.nanos = Int32(truncatingIfNeeded: nanos)
                    default: break
                    }
                }
            case (5, .bytes(let range)):
                var inner = WireReader(raw, range: range)
                while !inner.isAtEnd {
                    switch try inner.next() {
                    case (1, .bytes(let text)): event.producerProcess = string(text)
                    case (2, .bytes(let text)): event.producerModule = string(text)
                    default: break
                    }
                }
            case (6, .varint(let value)): event.causation = value
            case (7, .bytes(let range)):
                event.correlation = EventID(bytes: UnsafeRawBufferPointer(rebasing: raw[range])) ?? .zero
            case (8, .bytes(let range)): event.payload = slice(range)
            case (let field, _) where field <= 8:
                throw EnvelopeScanError(offset: start, reason: "field \(field) has the wrong wire type")
            default: break
            }
        }
        return event
    }

    /// The module part of the type name's package: "watchlist" for "bureau.watchlist.PairAdded".
    public var module: Substring { TypeName.shortName(of: String(TypeName.package(of: type))) }

    /// Decodes the payload as `M`; nil if the event is not of that type.
    public func payload<M: SwiftProtobuf.Message>(as type: M.Type) throws -> M? {
        guard self.type == M.protoMessageName else { return nil }
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
        return envelope
    }
}
