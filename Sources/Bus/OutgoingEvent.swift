import BureauSchemas
import EventLog
import SwiftProtobuf

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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

    /// The envelope bytes a producer sends (no position, no commit time): the bytes generated
    /// code writes, written by hand because every published event goes through here.
    public func envelopeBytes(process: String) throws -> Data {
        var writer = WireWriter(capacity: payload.count + type.utf8.count + process.utf8.count + 64)
        writeEnvelope(process: process, to: &writer)
        return Data(writer.bytes)
    }

    /// Writes the bytes ``envelopeBytes(process:)`` returns at the end of `writer`: for a
    /// client that writes a request's envelopes into its batch frame directly.
    public func writeEnvelope(process: String, to writer: inout WireWriter) {
        var idBytes = (id.high.bigEndian, id.low.bigEndian)
        withUnsafeBytes(of: &idBytes) { writer.bytes(2, $0) }
        writer.string(3, type)
        writer.message(5, strings: process, module)
        writer.varint(6, causation)
        var correlationBytes = (correlation.high.bigEndian, correlation.low.bigEndian)
        withUnsafeBytes(of: &correlationBytes) { writer.bytes(7, $0) }
        writer.bytes(8, payload)
    }
}
