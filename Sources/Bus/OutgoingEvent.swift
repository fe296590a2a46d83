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
    /// The span that publishes it, when its chain is traced (W3C traceparent's parent-id; the
    /// trace id is the correlation): 0, and not written, otherwise. See ``TraceParent``.
    public var traceParent: UInt64 = 0

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

    /// Writes the bytes ``envelopeBytes(process:)`` returns at the end of `writer`.
    public func writeEnvelope(process: String, to writer: inout WireWriter) {
        var envelopes = EnvelopeWriter(process: process)
        envelopes.write(self, to: &writer)
    }
}

/// Writes producer envelopes of one process, as ``OutgoingEvent/envelopeBytes(process:)``
/// does: the bytes generated code writes.
///
/// Keeps the encoded type and producer fields of the last event written: the events of a
/// request mostly share them, so for most events those fields are one copy of bytes.
public struct EnvelopeWriter {
    public let process: String
    private var type: String?
    private var typeField: [UInt8] = []
    private var module: String?
    private var producerField: [UInt8] = []

    public init(process: String) {
        self.process = process
    }

    /// Writes `event`'s envelope at the end of `writer`.
    public mutating func write(_ event: OutgoingEvent, to writer: inout WireWriter) {
        if event.type != type {
            var field = WireWriter(capacity: event.type.utf8.count + 6)
            field.string(3, event.type)
            type = event.type
            typeField = field.bytes
        }
        if event.module != module {
            var field = WireWriter(capacity: process.utf8.count + event.module.utf8.count + 12)
            field.message(5, strings: process, event.module)
            module = event.module
            producerField = field.bytes
        }
        var idBytes = (event.id.high.bigEndian, event.id.low.bigEndian)
        withUnsafeBytes(of: &idBytes) { writer.bytes(2, $0) }
        writer.append(typeField)
        writer.append(producerField)
        writer.varint(6, event.causation)
        var correlationBytes = (event.correlation.high.bigEndian, event.correlation.low.bigEndian)
        withUnsafeBytes(of: &correlationBytes) { writer.bytes(7, $0) }
        writer.bytes(8, event.payload)
        writer.fixed64(9, event.traceParent)
    }
}
