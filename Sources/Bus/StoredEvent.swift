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
    public init(envelopeBytes: Data) throws(BusError) {
        let envelope: Bureau_Envelope
        do {
            envelope = try Bureau_Envelope(serializedBytes: envelopeBytes)
        } catch {
            throw BusError.malformedEnvelope("\(error)")
        }
        self.init(
            position: envelope.position,
            id: EventID(bytes: envelope.id) ?? .zero,
            type: envelope.type,
            commitTime: CommitTime(seconds: envelope.commitTime.seconds, nanos: envelope.commitTime.nanos),
            producerProcess: envelope.producer.process,
            producerModule: envelope.producer.module,
            causation: envelope.causation,
            correlation: EventID(bytes: envelope.correlation) ?? .zero,
            payload: envelope.payload)
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

/// An event to publish: everything but the position and commit time, which the bus assigns.
public struct OutgoingEvent: Sendable, Equatable {
    /// The id that makes the append idempotent; retries reuse it.
    public var id: EventID
    public var type: String
    public var payload: Data
    /// The module publishing it; empty for a shell or a tool.
    public var module: String
    public var causation: UInt64
    public var correlation: EventID

    public init(
        id: EventID = .random(), type: String, payload: Data, module: String = "", causation: UInt64 = 0,
        correlation: EventID? = nil
    ) {
        self.id = id
        self.type = type
        self.payload = payload
        self.module = module
        self.causation = causation
        // An event that starts a chain is its own correlation.
        self.correlation = correlation ?? id
    }

    /// An event carrying `message`, typed by the message's protobuf name.
    public init(
        _ message: some SwiftProtobuf.Message, id: EventID = .random(), module: String = "", causation: UInt64 = 0,
        correlation: EventID? = nil
    ) throws {
        self.init(
            id: id, type: Swift.type(of: message).protoMessageName, payload: try message.serializedData(),
            module: module,
            causation: causation, correlation: correlation)
    }

    /// The envelope bytes a producer sends (no position, no commit time).
    public func envelopeBytes(process: String) throws -> Data {
        var envelope = Bureau_Envelope()
        envelope.id = Data(id.bytes)
        envelope.type = type
        envelope.producer.process = process
        envelope.producer.module = module
        envelope.causation = causation
        envelope.correlation = Data(correlation.bytes)
        envelope.payload = payload
        return try envelope.serializedData()
    }
}

/// What the bus did with one published event.
public enum PublishOutcome: Sendable, Equatable {
    /// Appended at this position.
    case committed(UInt64)
    /// An event with the same id was already committed at this position; nothing was appended.
    case duplicate(UInt64)
    /// Not appended, for this reason.
    case rejected(String)

    /// The position the event has in the log, if it has one.
    public var position: UInt64? {
        switch self {
        case .committed(let position), .duplicate(let position): position
        case .rejected: nil
        }
    }
}
