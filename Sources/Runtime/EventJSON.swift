import BureauSchemas
import Bus
import EventLog

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Events as JSON documents, so that a recorded event and a re-computed one can be shown and diffed.
public enum EventJSON {
    /// The payload in protobuf's JSON mapping; `{"unknown": true, "base64": …}` when the type is
    /// unknown, `{"undecodable": why, "base64": …}` when the bytes are not one of it.
    public static func payload(type: String, bytes: Data) -> JSONValue {
        let problem: String
        switch StoredEvent.reading(type: type, payload: bytes) {
        case .success(let text):
            do {
                return try JSONValue(parsing: text)
            } catch {
                problem = "its JSON does not read back: \(error)"
            }
        case .failure(.unknownType):
            return .object([("unknown", .bool(true)), ("base64", .string(bytes.base64EncodedString()))])
        case .failure(.undecodable(let reason)):
            problem = reason
        }
        return .object([("undecodable", .string(problem)), ("base64", .string(bytes.base64EncodedString()))])
    }

    /// A committed event: position, id, type, time, producer, causation, correlation, payload.
    public static func recorded(_ event: StoredEvent) -> JSONValue {
        .object([
            ("position", .integer(event.position)),
            ("id", .string("\(event.id)")),
            ("type", .string(event.type)),
            ("time", .string("\(event.commitTime)")),
            (
                "producer",
                .object([("process", .string(event.producerProcess)), ("module", .string(event.producerModule))])
            ),
            ("causation", .integer(event.causation)),
            ("correlation", .string("\(event.correlation)")),
            ("payload", payload(type: event.type, bytes: event.payload)),
        ])
    }

    /// An event as a reducer computes it: no position, time or process, which the bus assigns.
    public static func computed(_ event: OutgoingEvent) -> JSONValue {
        .object([
            ("id", .string("\(event.id)")),
            ("type", .string(event.type)),
            ("producer", .object([("module", .string(event.module))])),
            ("causation", .integer(event.causation)),
            ("correlation", .string("\(event.correlation)")),
            ("payload", payload(type: event.type, bytes: event.payload)),
        ])
    }

    /// The fields a reducer decides (id, type, module, causation, correlation, payload) that
    /// differ between a recorded event and a re-computed one.
    public static func differences(recorded: StoredEvent, computed: OutgoingEvent) -> [FieldDifference] {
        var result: [FieldDifference] = []
        func compare(_ path: String, _ before: JSONValue, _ after: JSONValue) {
            result += before.differences(to: after, at: path)
        }
        compare("id", .string("\(recorded.id)"), .string("\(computed.id)"))
        compare("type", .string(recorded.type), .string(computed.type))
        compare("producer.module", .string(recorded.producerModule), .string(computed.module))
        compare("causation", .integer(recorded.causation), .integer(computed.causation))
        compare("correlation", .string("\(recorded.correlation)"), .string("\(computed.correlation)"))
        let before = payload(type: recorded.type, bytes: recorded.payload)
        let after = payload(type: computed.type, bytes: computed.payload)
        let payloadDifferences = before.differences(to: after, at: "payload")
        if payloadDifferences.isEmpty, recorded.payload != computed.payload {
            // Equal in JSON, different on the wire (field order, unknown fields): still a divergence.
            result.append(
                FieldDifference(
                    path: "payload (bytes)", before: .string(recorded.payload.base64EncodedString()),
                    after: .string(computed.payload.base64EncodedString())))
        } else {
            result += payloadDifferences
        }
        return result
    }
}
