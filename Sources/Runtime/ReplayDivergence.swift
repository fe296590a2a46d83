import BureauSchemas
import Bus
import EventLog

/// Where a re-run reducer and the log disagree.
public struct ReplayDivergence: Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The recorded output and the re-computed one (same id) differ in a field.
        case different
        /// An output is in the log that the reducer no longer computes (no re-computed output has its id).
        case notComputed = "not-computed"
        /// The reducer computes an output that is not in the log, though later outputs of the module are.
        case notRecorded = "not-recorded"
        /// The recorded output is of an older shape that its upcaster could not read as today's.
        case unreadable
    }

    public let kind: Kind
    public let module: String
    /// The position in the log where the divergence shows: the recorded output's, or for an
    /// output not recorded, that of the module's next recorded output.
    public let position: UInt64
    /// The position of the input whose output diverges.
    public let inputPosition: UInt64
    public let recorded: StoredEvent?
    public let computed: OutgoingEvent?
    /// The fields that differ (recorded → re-computed); empty when one side is missing.
    public let differences: [FieldDifference]
    /// Why the recorded output could not be read, for ``Kind/unreadable``: the position, the
    /// upcaster and what it said.
    public let reason: String?

    public init(
        kind: Kind, module: String, position: UInt64, inputPosition: UInt64, recorded: StoredEvent?,
        computed: OutgoingEvent?, differences: [FieldDifference], reason: String? = nil
    ) {
        self.kind = kind
        self.module = module
        self.position = position
        self.inputPosition = inputPosition
        self.recorded = recorded
        self.computed = computed
        self.differences = differences
        self.reason = reason
    }

    public var recordedJSON: JSONValue? { recorded.map(EventJSON.recorded) }
    public var computedJSON: JSONValue? { computed.map(EventJSON.computed) }

    /// Everything as one JSON document.
    public var json: JSONValue {
        var fields: [(String, JSONValue)] = [
            ("kind", .string(kind.rawValue)), ("module", .string(module)), ("position", .integer(position)),
            ("inputPosition", .integer(inputPosition)), ("recorded", recordedJSON ?? .null),
            ("recomputed", computedJSON ?? .null), ("differences", .array(differences.map(\.json))),
        ]
        if let reason { fields.append(("reason", .string(reason))) }
        return .object(fields)
    }

    /// Several lines for people: what, where, both events as JSON, and the field differences.
    public var description: String {
        let what =
            switch kind {
            case .different: "the re-computed output differs from the recorded one"
            case .notComputed: "a recorded output is no longer computed"
            case .notRecorded: "a re-computed output is not in the log"
            case .unreadable: "the recorded output cannot be read: \(reason ?? "its upcaster failed")"
            }
        var lines = [
            "divergence at position \(position), module \(module), input at position \(inputPosition): \(what)",
            "recorded:    " + (recordedJSON?.description ?? "(none)"),
            "re-computed: " + (computedJSON?.description ?? "(none)"),
        ]
        if !differences.isEmpty {
            lines.append("differences (recorded → re-computed):")
            lines += differences.map { "  \($0)" }
        }
        return lines.joined(separator: "\n")
    }
}
