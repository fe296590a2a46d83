import BureauSchemas
import Bus
import EventLog

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Runs a reducer over recorded events, offline: the clean run that crash recovery, replay and
/// determinism are checked against.
public struct ReducerReplay<R: Reducer> {
    public let reducer: R
    public var state: R.State { current }
    /// The position of the last input applied.
    public var position: UInt64 { lastInput }
    /// Every output computed, in order, ids derived as the host derives them.
    public var outputs: [OutgoingEvent] { kept }
    public var inputCount: Int { inputsApplied }
    /// Inputs whose payload did not decode (the host passes them over with an ErrorRaised).
    public var malformed: [UInt64] { malformedInputs }

    // Stored apart from their public names so that the inlinable methods below, which a
    // reducer's module compiles for its own type, can set them.
    @usableFromInline var current: R.State
    @usableFromInline var lastInput: UInt64 = 0
    @usableFromInline var kept: [OutgoingEvent] = []
    @usableFromInline var inputsApplied = 0
    @usableFromInline var malformedInputs: [UInt64] = []
    /// The reducer's inputs and output types, read once: ``advance(_:)`` and
    /// ``applyInput(_:keepOutputs:)`` run for every event.
    @usableFromInline let inputs: InputDecoder<R.Input>
    /// The schemas' own copies of the names (``SchemaRegistry/knownTypeName(_:)``), which
    /// events decoded from a stream carry too: a name compared with itself ends at its first word.
    @usableFromInline let outputTypes: [String]

    public init(_ reducer: R, from snapshot: Snapshot<R.State>? = nil) {
        self.reducer = reducer
        inputs = reducer.inputs
        outputTypes = reducer.outputTypes.map(SchemaRegistry.sharedTypeName)
        current = snapshot?.state ?? reducer.initialState
        lastInput = snapshot?.position ?? 0
    }

    /// Applies `event` if it is an input after the current position; returns its outputs.
    @discardableResult
    public mutating func apply(_ event: StoredEvent, keepOutputs: Bool = true) -> [OutgoingEvent] {
        if case .applied(let produced) = applyInput(event, keepOutputs: keepOutputs) { return produced }
        return []
    }

    /// Applies `event` as the host would (``Reducer/step(_:state:)``), and says what it was.
    @inlinable
    public mutating func applyInput(_ event: StoredEvent, keepOutputs: Bool = false) -> ReducerStep {
        guard event.position > lastInput else { return .notAnInput }
        let step = reducer.step(event, state: &current, inputs: inputs, outputTypes: outputTypes)
        if keepOutputs, case .applied(let produced) = step { kept += produced }
        count(step.kind, at: event.position)
        return step
    }

    /// Applies `event` as ``applyInput(_:keepOutputs:)`` does without building its outputs
    /// (``Reducer/advance(_:state:)``, given the inputs and output types kept here): what
    /// replay needs.
    @inlinable
    public mutating func advance(_ event: StoredEvent) -> ReducerStep.Kind {
        guard event.position > lastInput else { return .notAnInput }
        let kind = reducer.advance(event, state: &current, inputs: inputs, outputTypes: outputTypes)
        count(kind, at: event.position)
        return kind
    }

    @inlinable
    mutating func count(_ kind: ReducerStep.Kind, at eventPosition: UInt64) {
        switch kind {
        case .notAnInput: return
        case .applied: inputsApplied += 1
        case .malformed: malformedInputs.append(eventPosition)
        }
        lastInput = eventPosition
    }

    /// The state as JSON, keys sorted, as a snapshot would hold it.
    public func stateJSON() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(state)
    }
}
