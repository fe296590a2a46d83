import BureauSchemas
import Bus
import EventLog

/// Re-runs reducers over their recorded inputs and checks that they produce the recorded
/// outputs: type, payload, id, causation and correlation. Like Temporal's replayer, it is how
/// a changed reducer is checked against real history.
///
/// Feed it every event of the log in order with ``check(_:)``; it answers the first
/// divergence it sees, then ``finish()`` at the end. Outputs are matched by their derived id.
/// A host publishes a module's outputs in the order of their inputs, so a re-computed output
/// that is not in the log before a later output of the same module is a divergence too; the
/// outputs of the last inputs, after the module's last recorded output, may not be published
/// yet (a host that is behind or stopped) and are only counted, as ``ModuleCount/unpublished``.
public final class ReplayVerifier {
    private var modules: [ModuleCheck]

    /// A verifier of these reducers, each from its initial state (the log from position 1).
    public init(reducers: [any Reducer]) {
        modules = reducers.map { ModuleCheck(AnyReducerReplay.of($0)) }
    }

    /// Checks one event, in log order; the divergence it reveals, if any.
    public func check(_ event: StoredEvent) -> ReplayDivergence? {
        for module in modules {
            if let divergence = module.check(event) { return divergence }
        }
        return nil
    }

    /// What was compared so far, per module.
    public var counts: [ModuleCount] { modules.map(\.count) }

    /// Verifies a whole sequence of events: the first divergence, or nil, and the counts.
    public static func verify(
        reducers: [any Reducer], events: some Sequence<StoredEvent>
    ) -> (divergence: ReplayDivergence?, counts: [ModuleCount]) {
        let verifier = ReplayVerifier(reducers: reducers)
        for event in events {
            if let divergence = verifier.check(event) { return (divergence, verifier.counts) }
        }
        return (nil, verifier.counts)
    }

    /// Inputs and outputs compared for one module.
    public struct ModuleCount: Sendable, Equatable {
        public let module: String
        /// Inputs re-applied.
        public var inputs = 0
        /// Recorded outputs found equal to the re-computed ones.
        public var outputsCompared = 0
        /// Inputs whose payload does not decode (answered by an ErrorRaised).
        public var malformedInputs = 0
        /// Re-computed outputs of the last inputs that are not in the log (yet).
        public var unpublished = 0
    }
}

/// Where a re-run reducer and the log disagree.
public struct ReplayDivergence: Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The recorded output and the re-computed one (same id) differ in a field.
        case different
        /// An output is in the log that the reducer no longer computes (no re-computed output has its id).
        case notComputed = "not-computed"
        /// The reducer computes an output that is not in the log, though later outputs of the module are.
        case notRecorded = "not-recorded"
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

    public var recordedJSON: JSONValue? { recorded.map(EventJSON.recorded) }
    public var computedJSON: JSONValue? { computed.map(EventJSON.computed) }

    /// Everything as one JSON document.
    public var json: JSONValue {
        .object([
            ("kind", .string(kind.rawValue)), ("module", .string(module)), ("position", .integer(position)),
            ("inputPosition", .integer(inputPosition)), ("recorded", recordedJSON ?? .null),
            ("recomputed", computedJSON ?? .null), ("differences", .array(differences.map(\.json))),
        ])
    }

    /// Several lines for people: what, where, both events as JSON, and the field differences.
    public var description: String {
        let what =
            switch kind {
            case .different: "the re-computed output differs from the recorded one"
            case .notComputed: "a recorded output is no longer computed"
            case .notRecorded: "a re-computed output is not in the log"
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

/// One module's check: its reducer run and the outputs it computed that the log has not shown yet.
private final class ModuleCheck {
    struct Expected {
        let output: OutgoingEvent
        let inputPosition: UInt64
    }

    let run: AnyReducerReplay
    var count: ReplayVerifier.ModuleCount
    /// In the order computed, which is the order a host publishes; `head` skips matched ones.
    private var expected: [Expected?] = []
    private var head = 0
    private var byID: [EventID: Int] = [:]

    /// The high half every id this module's host derives shares.
    private let derivedHigh: UInt64

    init(_ run: AnyReducerReplay) {
        self.run = run
        count = ReplayVerifier.ModuleCount(module: run.module)
        derivedHigh = EventID.derived(module: run.module, position: 0, index: 0).high
    }

    /// Whether the module's host published `event`: its module, and an id it derives or one of its output types.
    private func isRecordedOutput(_ event: StoredEvent) -> Bool {
        event.producerModule == run.module && (event.id.high == derivedHigh || run.outputTypes.contains(event.type))
    }

    func check(_ event: StoredEvent) -> ReplayDivergence? {
        if isRecordedOutput(event), let divergence = compare(event) { return divergence }
        switch run.apply(event) {
        case .notAnInput:
            break
        case .applied(let outputs):
            count.inputs += 1
            for output in outputs {
                expect(Expected(output: output, inputPosition: event.position))
            }
        case .malformed(let error, _):
            count.inputs += 1
            count.malformedInputs += 1
            expect(Expected(output: error, inputPosition: event.position))
        }
        count.unpublished = byID.count
        return nil
    }

    private func expect(_ expected: Expected) {
        byID[expected.output.id] = self.expected.count
        self.expected.append(expected)
    }

    /// Compares a recorded output of this module with the one re-computed under its id.
    private func compare(_ recorded: StoredEvent) -> ReplayDivergence? {
        guard let index = byID[recorded.id], let match = expected[index] else {
            return ReplayDivergence(
                kind: .notComputed, module: run.module, position: recorded.position, inputPosition: recorded.causation,
                recorded: recorded, computed: nil, differences: [])
        }
        // Outputs computed before this one and still not seen were skipped by the host: not recorded.
        while head < index {
            if let skipped = expected[head] {
                return ReplayDivergence(
                    kind: .notRecorded, module: run.module, position: recorded.position,
                    inputPosition: skipped.inputPosition, recorded: nil, computed: skipped.output, differences: [])
            }
            head += 1
        }
        let output = match.output
        // The common case, checked without rendering either event as JSON.
        let same =
            recorded.type == output.type && recorded.causation == output.causation
            && recorded.correlation == output.correlation && recorded.producerModule == output.module
            && recorded.payload == output.payload
        let differences = same ? [] : EventJSON.differences(recorded: recorded, computed: output)
        guard differences.isEmpty else {
            return ReplayDivergence(
                kind: .different, module: run.module, position: recorded.position, inputPosition: match.inputPosition,
                recorded: recorded, computed: match.output, differences: differences)
        }
        expected[index] = nil
        byID[recorded.id] = nil
        head = index + 1
        count.outputsCompared += 1
        // Keep the list short on long logs: everything before `head` is matched.
        if head > 4096, head * 2 > expected.count {
            expected.removeFirst(head)
            byID = byID.mapValues { $0 - head }
            head = 0
        }
        count.unpublished = byID.count
        return nil
    }
}
