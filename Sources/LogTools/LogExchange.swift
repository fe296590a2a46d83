import BureauSchemas
import Bus
import EventLog

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The JSON lines of `log export` and `log import`.
public enum LogExchange {
    /// One line: the event as `log show --json` prints it, plus the stored envelope in base64.
    public static func line(_ event: StoredEvent, envelope: Data) -> String {
        String(event.jsonLine.dropLast()) + ",\"envelope\":\"\(envelope.base64EncodedString())\"}"
    }

    /// What is wrong with one line.
    public struct Problem: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// The log record a line describes, which must be at position `expected`.
    public static func record(from line: [UInt8], expecting expected: UInt64) throws -> LogRecord {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: Data(line))
        } catch {
            throw Problem("not JSON: \(error)")
        }
        guard case .object = value else { throw Problem("not a JSON object") }
        guard case .number(let positionText)? = value["position"], let position = UInt64(positionText) else {
            throw Problem("no \"position\" (a whole number)")
        }
        guard position == expected else {
            throw Problem(
                expected == 1
                    ? "the first event is at position \(position); an import starts at position 1 (export with --from 1)"
                    : "position \(position) where \(expected) should be: the excerpt has a hole or is out of order")
        }
        let body: Data
        if let envelope = value["envelope"] {
            guard case .string(let text) = envelope, let bytes = Data(base64Encoded: text) else {
                throw Problem("\"envelope\" is not base64")
            }
            body = bytes
        } else {
            body = try envelopeBytes(fromFields: value, position: position)
        }
        let event: StoredEvent
        do {
            event = try StoredEvent(envelopeBytes: body)
        } catch {
            throw Problem("the envelope does not decode: \(error)")
        }
        guard event.position == position else {
            throw Problem("the envelope says position \(event.position) but the line says \(position)")
        }
        if case .string(let text)? = value["id"], EventID(text) != event.id {
            throw Problem("the envelope's id is \(event.id) but the line says \(text)")
        }
        if case .string(let text)? = value["type"], text != event.type {
            throw Problem("the envelope's type is \(event.type) but the line says \(text)")
        }
        return LogRecord(position: position, id: event.id, body: body)
    }

    /// An envelope built from a line's readable fields (a line written or edited by hand).
    private static func envelopeBytes(fromFields value: JSONValue, position: UInt64) throws -> Data {
        func string(_ key: String) throws -> String {
            guard case .string(let text)? = value[key] else { throw Problem("no \"\(key)\" (a string)") }
            return text
        }
        func identifier(_ key: String) throws -> EventID {
            let text = try string(key)
            guard let id = EventID(text) else { throw Problem("\"\(key)\" '\(text)' is not an event id") }
            return id
        }
        let type = try string("type")
        let timeText = try string("time")
        guard let time = CommitTime(timeText) else { throw Problem("\"time\" '\(timeText)' is not an RFC 3339 time") }
        var causation: UInt64 = 0
        if let field = value["causation"] {
            guard case .number(let text) = field, let number = UInt64(text) else {
                throw Problem("\"causation\" is not a whole number")
            }
            causation = number
        }
        var process = ""
        var module = ""
        if case .string(let text)? = value["producer"]?["process"] { process = text }
        if case .string(let text)? = value["producer"]?["module"] { module = text }
        let payload: Data
        if case .string(let base64)? = value["payloadBase64"] {
            guard let bytes = Data(base64Encoded: base64) else { throw Problem("\"payloadBase64\" is not base64") }
            payload = bytes
        } else if let json = value["payload"], json != .null {
            guard let messageType = SchemaRegistry.messageType(named: type) else {
                throw Problem("type \(type) is unknown to this build; give its bytes as \"payloadBase64\"")
            }
            do {
                payload = try messageType.init(jsonString: json.description).serializedData()
            } catch {
                throw Problem("\"payload\" is not a valid \(type): \(error)")
            }
        } else {
            throw Problem("no \"payload\" and no \"payloadBase64\"")
        }
        let event = StoredEvent(
            position: position, id: try identifier("id"), type: type, commitTime: time, producerProcess: process,
            producerModule: module, causation: causation,
            correlation: value["correlation"] == nil ? .zero : try identifier("correlation"), payload: payload)
        do {
            return try event.envelope().serializedData()
        } catch {
            throw Problem("the envelope does not encode: \(error)")
        }
    }
}
