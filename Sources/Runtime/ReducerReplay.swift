import Bus

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
        guard event.position > position, !reducer.isOwnOutput(event) else { return [] }
        do {
            guard let produced = try reducer.apply(event, to: &state) else { return [] }
            position = event.position
            inputCount += 1
            if keepOutputs { outputs += produced }
            return produced
        } catch {
            position = event.position
            malformed.append(event.position)
            return []
        }
    }
}
