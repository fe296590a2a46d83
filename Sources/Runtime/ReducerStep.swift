import BureauSchemas
import Bus

/// What a reducer makes of one committed event: the one step every runner of reducers takes —
/// the host live, replay offline, the verifier comparing with the log — so that they cannot
/// disagree on what an input is, which ids its outputs get, or what a malformed input yields.
public enum ReducerStep: Sendable, Equatable {
    /// Not an input of this reducer, or one of its own outputs.
    case notAnInput
    /// An input, and the outputs it produced: ids derived from the module, the input's position
    /// and the output's index; causation the input; correlation the input's (or its id).
    case applied([OutgoingEvent])
    /// An input whose payload does not decode: it is passed over, and the host publishes
    /// `error`, an `ErrorRaised` with a derived id, so that it too is published once.
    case malformed(error: OutgoingEvent, reason: String)

    /// What a step was, without its outputs: what replay keeps.
    public enum Kind: Sendable, Equatable {
        case notAnInput, applied, malformed
    }

    /// What the step was.
    public var kind: Kind {
        switch self {
        case .notAnInput: .notAnInput
        case .applied: .applied
        case .malformed: .malformed
        }
    }

    /// The events the step publishes.
    public var outputs: [OutgoingEvent] {
        switch self {
        case .notAnInput: []
        case .applied(let outputs): outputs
        case .malformed(let error, _): [error]
        }
    }
}

extension Reducer {
    /// Takes ``ReducerStep`` for `event`: applies it to `state` if it is an input.
    @inlinable
    public func step(_ event: StoredEvent, state: inout State) -> ReducerStep {
        step(event, state: &state, inputs: inputs, outputTypes: outputTypes)
    }

    /// ``step(_:state:)`` with the reducer's `inputs` and `outputTypes` given, by a runner that
    /// keeps them (see ``advance(_:state:inputs:outputTypes:)``).
    @inlinable
    func step(
        _ event: StoredEvent, state: inout State, inputs: InputDecoder<Input>, outputTypes: [String]
    ) -> ReducerStep {
        guard !isOwnOutput(event, outputTypes: outputTypes) else { return .notAnInput }
        do {
            guard let outputs = try apply(event, to: &state, inputs: inputs) else { return .notAnInput }
            return .applied(outputs)
        } catch {
            let reason = "\(error)"
            return .malformed(error: malformedInputError(event, reason: reason), reason: reason)
        }
    }

    /// Takes the step for `event` without building its outputs (no payload encoded, no id
    /// derived): replay keeps the states and drops the outputs, and building them was a tenth of
    /// its time. The state ends as ``step(_:state:)`` leaves it, and so does the kind, unless
    /// encoding an output would throw (`step` then calls the input malformed): swift-protobuf
    /// throws only for a proto2 required field left unset or an `Any` it cannot resolve, and no
    /// event type of Bureau's has either.
    @inlinable
    public func advance(_ event: StoredEvent, state: inout State) -> ReducerStep.Kind {
        advance(event, state: &state, inputs: inputs, outputTypes: outputTypes)
    }

    /// ``advance(_:state:)`` with the reducer's `inputs` and `outputTypes` given, by a runner
    /// that keeps them (``ReducerReplay``): read from the reducer, they are its static lists,
    /// copied (their references counted) and released again for every event.
    @inlinable
    func advance(
        _ event: StoredEvent, state: inout State, inputs: InputDecoder<Input>, outputTypes: [String]
    ) -> ReducerStep.Kind {
        guard !isOwnOutput(event, outputTypes: outputTypes) else { return .notAnInput }
        let input: Input
        do {
            guard let decoded = try inputs.decode(event) else { return .notAnInput }
            input = decoded
        } catch {
            return .malformed
        }
        _ = reduce(state: &state, input: Envelope(event, payload: input))
        return .applied
    }

    /// The `ErrorRaised` for an input that does not decode. Nothing in it depends on where the
    /// reducer runs (not even the process name), so replaying it computes the very same event.
    @usableFromInline
    func malformedInputError(_ event: StoredEvent, reason: String) -> OutgoingEvent {
        ErrorReporter(module: module, process: "").event(
            code: .malformedInput, message: reason, causation: event.position,
            id: .derived(module: module, position: event.position, index: 0xFFFF),
            correlation: event.correlation == .zero ? event.id : event.correlation)
    }
}
