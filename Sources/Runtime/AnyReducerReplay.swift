import Bus
import EventLog
import Guards

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One module's reducer run offline over the log, its type erased so that a list can hold
/// every module's.
///
/// It applies events as the host does (inputs only, each once, own outputs passed over) and
/// shows its state as JSON.
public final class AnyReducerReplay {
    public let module: String
    /// The reducer's output types, to recognise its own events.
    public let outputTypes: [String]
    @usableFromInline let applyEvent: (StoredEvent) -> ReducerStep
    @usableFromInline let advanceEvent: (StoredEvent) -> ReducerStep.Kind
    @usableFromInline let encodeState: () throws -> JSONValue
    @usableFromInline let counters: () -> (position: UInt64, inputs: Int, malformed: Int)
    @usableFromInline let makeCopy: () -> AnyReducerReplay

    /// A run of `reducer` from its initial state.
    public convenience init<R: Reducer>(_ reducer: R) {
        self.init(replay: ReducerReplay(reducer))
    }

    /// Goes on from where `replay` stands.
    ///
    /// Inlinable, and called from ``Reducer/replayRun()``, so that these closures are compiled
    /// in the reducer's module for its type: compiled here, for any reducer, every event
    /// advanced looked up the type metadata of `ReducerReplay<R>` at run time.
    @inlinable
    init<R: Reducer>(replay: ReducerReplay<R>) {
        let box = UncheckedBox(replay)
        let reducer = replay.reducer
        module = reducer.module
        outputTypes = reducer.outputTypes
        makeCopy = { AnyReducerReplay(replay: box.value) }
        applyEvent = { box.value.applyInput($0) }
        advanceEvent = { box.value.advance($0) }
        encodeState = { try AnyReducerReplay.encodedState(of: box.value) }
        counters = { (box.value.lastInput, box.value.inputsApplied, box.value.malformedInputs.count) }
    }

    /// `replay`'s state as ``state()`` gives it.
    @usableFromInline
    static func encodedState<R: Reducer>(of replay: ReducerReplay<R>) throws -> JSONValue {
        let state = replay.state
        return try JSONValue(parsing: try replay.stateJSON()).sortingUnorderedArrays { sorted in
            let decoded = try? JSONDecoder().decode(R.State.self, from: Data(sorted.description.utf8))
            return decoded == state
        }
    }

    /// A run of a reducer whose type is known only at run time (a module registry's).
    public static func of(_ reducer: any Reducer) -> AnyReducerReplay {
        reducer.replayRun()
    }

    /// Applies `event` if it is an input; says what it was.
    @discardableResult
    public func apply(_ event: StoredEvent) -> ReducerStep { applyEvent(event) }

    /// Applies `event` if it is an input, building no outputs; says what it was.
    @discardableResult
    public func advance(_ event: StoredEvent) -> ReducerStep.Kind { advanceEvent(event) }

    /// The position of the last input applied; 0 before the first.
    public var position: UInt64 { counters().position }
    /// How many inputs were applied (malformed ones included).
    public var inputCount: Int { counters().inputs }
    /// How many inputs did not decode.
    public var malformedCount: Int { counters().malformed }

    /// The state as JSON, keys sorted, and a set's members too: equal states print the same.
    public func state() throws -> JSONValue {
        try encodeState()
    }

    /// An independent run from the same point: applying events to one leaves the other as it was.
    public func copy() -> AnyReducerReplay { makeCopy() }
}
