import Bus

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Runs a reducer over recorded events, offline: the clean run that crash recovery, replay and
/// determinism are checked against.
public struct ReducerReplay<R: Reducer> {
    public let reducer: R
    public private(set) var state: R.State
    /// The position of the last input applied.
    public private(set) var position: UInt64 = 0
    /// Every output computed, in order, ids derived as the host derives them.
    public private(set) var outputs: [OutgoingEvent] = []
    public private(set) var inputCount = 0
    /// Inputs whose payload did not decode (the host passes them over with an ErrorRaised).
    public private(set) var malformed: [UInt64] = []

    public init(_ reducer: R, from snapshot: Snapshot<R.State>? = nil) {
        self.reducer = reducer
        state = snapshot?.state ?? reducer.initialState
        position = snapshot?.position ?? 0
    }

    /// Applies `event` if it is an input after the current position; returns its outputs.
    @discardableResult
    public mutating func apply(_ event: StoredEvent, keepOutputs: Bool = true) -> [OutgoingEvent] {
        if case .applied(let produced) = applyInput(event, keepOutputs: keepOutputs) { return produced }
        return []
    }

    /// Applies `event` as the host would (``Reducer/step(_:state:)``), and says what it was.
    public mutating func applyInput(_ event: StoredEvent, keepOutputs: Bool = false) -> ReducerStep {
        guard event.position > position else { return .notAnInput }
        let step = reducer.step(event, state: &state)
        if keepOutputs, case .applied(let produced) = step { outputs += produced }
        count(step.kind, at: event.position)
        return step
    }

    /// Applies `event` as ``applyInput(_:keepOutputs:)`` does without building its outputs
    /// (``Reducer/advance(_:state:)``): what replay needs.
    public mutating func advance(_ event: StoredEvent) -> ReducerStep.Kind {
        guard event.position > position else { return .notAnInput }
        let kind = reducer.advance(event, state: &state)
        count(kind, at: event.position)
        return kind
    }

    private mutating func count(_ kind: ReducerStep.Kind, at eventPosition: UInt64) {
        switch kind {
        case .notAnInput: return
        case .applied: inputCount += 1
        case .malformed: malformed.append(eventPosition)
        }
        position = eventPosition
    }

    /// The state as JSON, keys sorted, as a snapshot would hold it.
    public func stateJSON() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(state)
    }
}
