import Bus
import EventLog

/// A feature's business logic: a pure state machine over the events it consumes.
///
/// `reduce` switches over the input, mutates the state and returns the events to publish.
/// It must be deterministic: time comes from the input's commit time; no clock, no random
/// number, no I/O. The host gives each output an id derived from the module, the input's
/// position and the output's index, so running a reducer again over the same input produces
/// the same events with the same ids. Every request gets an answer: an accepted fact or a
/// rejection with a reason.
public protocol Reducer: Sendable {
    associatedtype State: Codable & Equatable & Sendable
    associatedtype Input: Sendable

    /// The module's name; its events live in the package `bureau.<module>`.
    var module: String { get }
    /// Bumped whenever `State`'s encoding changes incompatibly: older snapshots are then
    /// ignored and the state is rebuilt from the log.
    var stateVersion: Int { get }
    var initialState: State { get }
    /// The inputs, and how each is decoded. The same for every call: runners may read it once
    /// (replay does).
    var inputs: InputDecoder<Input> { get }
    /// The type names of every event `reduce` can emit. The same for every call, as `inputs`.
    var outputTypes: [String] { get }

    func reduce(state: inout State, input: Envelope<Input>) -> [Emitted]

    /// Takes ``ReducerStep`` for one committed event. Do not implement it: the default is the
    /// one every runner shares. It is a requirement so that the module conforming compiles a
    /// copy for its own reducer (the default is inlinable): hosts and replay run generic code
    /// that knows the reducer's type only at run time, which costs every event dearly.
    func step(_ event: StoredEvent, state: inout State) -> ReducerStep
    /// ``step(_:state:)`` without building the outputs. Do not implement it either: replay runs
    /// the same default with the inputs and output types it keeps (``ReducerReplay``).
    func advance(_ event: StoredEvent, state: inout State) -> ReducerStep.Kind
    /// A replay of this reducer from its initial state, its type erased. Do not implement it
    /// either: the default, inlinable, makes replay's per-event code for this reducer's type.
    func replayRun() -> AnyReducerReplay
}

extension Reducer {
    @inlinable
    public func replayRun() -> AnyReducerReplay {
        AnyReducerReplay(replay: ReducerReplay(self))
    }

    /// The type names of the inputs.
    public var inputTypes: [String] { inputs.typeNames }

    /// The subscription a host needs: its inputs, and its own outputs (to recognise, after a
    /// restart, which outputs are already in the log).
    public var subscriptionFilter: EventFilter { EventFilter(prefixes: inputTypes + outputTypes) }

    /// Applies the input carried by `event`, if it is one; returns the events to publish, ids
    /// derived, causation and correlation set.
    @inlinable
    public func apply(_ event: StoredEvent, to state: inout State) throws -> [OutgoingEvent]? {
        try apply(event, to: &state, inputs: inputs)
    }

    /// ``apply(_:to:)`` with the reducer's `inputs` given.
    @inlinable
    func apply(_ event: StoredEvent, to state: inout State, inputs: InputDecoder<Input>) throws -> [OutgoingEvent]? {
        guard let input = try inputs.decode(event) else { return nil }
        let envelope = Envelope(event, payload: input)
        let emitted = reduce(state: &state, input: envelope)
        // A plain loop: this runs unspecialized (the reducer's type is known only at run time),
        // where `enumerated().map` looks up generic type metadata for every event.
        var outputs: [OutgoingEvent] = []
        outputs.reserveCapacity(emitted.count)
        let module = self.module
        for index in emitted.indices {
            outputs.append(
                try emitted[index].outgoing(
                    id: .derived(module: module, position: event.position, index: index), module: module,
                    causation: event.position, correlation: envelope.correlation))
        }
        return outputs
    }

    /// Whether `event` is one this reducer published.
    @inlinable
    public func isOwnOutput(_ event: StoredEvent) -> Bool {
        isOwnOutput(event, outputTypes: outputTypes)
    }

    /// ``isOwnOutput(_:)`` with the reducer's `outputTypes` given.
    @inlinable
    func isOwnOutput(_ event: StoredEvent, outputTypes: [String]) -> Bool {
        event.producerModule == module && outputTypes.contains(event.type)
    }
}
