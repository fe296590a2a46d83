import BureauSchemas
import Guards
import SwiftProtobuf

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension StoredEvent {
    /// Why a payload cannot be shown in protobuf's JSON mapping.
    public enum PayloadProblem: Error, Equatable {
        /// This build has no schema for the type (a later build's event): nothing is wrong.
        case unknownType
        /// The type is known and the bytes are not one of it: damage, or a writer's bug.
        case undecodable(String)
    }

    /// The payload in protobuf's JSON mapping, or why it cannot be shown so.
    public var payloadReading: Result<String, PayloadProblem> { Self.reading(type: type, payload: payload) }

    /// A payload of `type` in protobuf's JSON mapping, or why it cannot be shown so.
    public static func reading(type: String, payload: Data) -> Result<String, PayloadProblem> {
        guard let messageType = SchemaRegistry.messageType(named: type) else { return .failure(.unknownType) }
        do {
            return .success(try messageType.init(serializedBytes: payload).jsonString())
        } catch {
            return .failure(.undecodable("\(error)"))
        }
    }

    /// The payload in protobuf's JSON mapping, or nil if the type is unknown or the bytes do not
    /// decode (``payloadReading`` says which).
    public var payloadJSON: String? {
        if case .success(let json) = payloadReading { json } else { nil }
    }

    /// One line for people: position, time, type and the payload.
    ///
    ///     42 2026-11-22T02:20:42.350123Z bureau.watchlist.PairAdded {"base":"EUR","quote":"USD"}
    ///
    /// An event read through upcasters says so after its payload: `(upcast from TYPE)`, or why
    /// it could not be.
    public var line: String {
        "\(position) \(commitTime) \(TerminalText.escaped(type)) \(TerminalText.escaped(summary))"
            + (upcastNote.map { " (\(TerminalText.escaped($0)))" } ?? "")
    }

    /// What upcasting did to this event, in words; nil if it is read as stored.
    public var upcastNote: String? {
        switch upcast {
        case nil: nil
        case .upcast(let stored, let steps): "upcast from \(stored)" + (steps > 1 ? " in \(steps) steps" : "")
        case .failed(let stored, let upcaster, let reason):
            "stored as \(stored); \(upcaster) could not read it as \(type): \(reason)"
        }
    }

    /// The payload for people: its JSON, or what is known of it when the type is unknown.
    public var summary: String {
        if upcastFailure != nil { return "(\(payload.count) bytes as stored: \(payload.base64EncodedString()))" }
        switch payloadReading {
        case .success(let json): return json
        case .failure(.unknownType):
            return "(unknown type, \(payload.count) bytes: \(payload.base64EncodedString()))"
        case .failure(.undecodable(let reason)):
            return "(not a valid \(type): \(reason); \(payload.count) bytes: \(payload.base64EncodedString()))"
        }
    }

    /// One JSON object: the envelope's fields and the payload in protobuf's JSON mapping.
    ///
    /// An event of a type this build does not know has `"unknown": true` and the payload's
    /// bytes in `"payloadBase64"`; one of a known type whose bytes do not decode has
    /// `"undecodable"` (why) and the bytes in `"payloadBase64"`.
    public var jsonLine: String {
        var fields = [
            "\"position\":\(position)",
            "\"id\":\"\(id)\"",
            "\"type\":\(JSONText.quoted(type))",
            "\"time\":\"\(commitTime)\"",
            "\"producer\":{\"process\":\(JSONText.quoted(producerProcess)),\"module\":\(JSONText.quoted(producerModule))}",
            "\"causation\":\(causation)",
            "\"correlation\":\"\(correlation)\"",
        ]
        switch upcast {
        case nil: break
        case .upcast(let stored, _): fields.append("\"upcastFrom\":\(JSONText.quoted(stored))")
        case .failed(let stored, let upcaster, let reason):
            fields.append("\"upcastFrom\":\(JSONText.quoted(stored))")
            fields.append("\"upcastFailed\":\(JSONText.quoted("\(upcaster): \(reason)"))")
        }
        let reading: Result<String, PayloadProblem> = upcastFailure == nil ? payloadReading : .failure(.unknownType)
        switch reading {
        case .success(let json):
            fields.append("\"payload\":\(json)")
        case .failure(let problem):
            fields.append("\"payload\":null")
            if case .undecodable(let reason) = problem {
                fields.append("\"undecodable\":\(JSONText.quoted(reason))")
            } else {
                fields.append("\"unknown\":true")
            }
            fields.append("\"payloadBase64\":\"\(payload.base64EncodedString())\"")
        }
        return "{" + fields.joined(separator: ",") + "}"
    }
}

/// JSON text written by hand, where building a value to encode would cost more than it says.
public enum JSONText {
    /// `text` as a JSON string literal.
    public static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case let control where control.value < 0x20:
                let hex = String(control.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
