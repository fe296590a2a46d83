import Bus
import EventLog

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
    private let applyEvent: (StoredEvent) -> ReducerStep
    private let encodeState: () throws -> JSONValue
    private let counters: () -> (position: UInt64, inputs: Int, malformed: Int)
    private let makeCopy: () -> AnyReducerReplay

    /// A run of `reducer` from its initial state.
    public convenience init<R: Reducer>(_ reducer: R) {
        self.init(replay: ReducerReplay(reducer))
    }

    /// Goes on from where `replay` stands.
    init<R: Reducer>(replay: ReducerReplay<R>) {
        let box = ReplayBox(replay)
        let reducer = replay.reducer
        module = reducer.module
        outputTypes = reducer.outputTypes
        makeCopy = { AnyReducerReplay(replay: box.replay) }
        applyEvent = { box.replay.applyInput($0) }
        encodeState = {
            let state = box.replay.state
            return try JSONValue(parsing: try box.replay.stateJSON()).sortingUnorderedArrays { sorted in
                let decoded = try? JSONDecoder().decode(R.State.self, from: Data(sorted.description.utf8))
                return decoded == state
            }
        }
        counters = { (box.replay.position, box.replay.inputCount, box.replay.malformed.count) }
    }

    /// A run of a reducer whose type is known only at run time (a module registry's).
    public static func of(_ reducer: any Reducer) -> AnyReducerReplay {
        AnyReducerReplay(reducer)
    }

    /// Applies `event` if it is an input; says what it was.
    @discardableResult
    public func apply(_ event: StoredEvent) -> ReducerStep { applyEvent(event) }

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

private final class ReplayBox<R: Reducer> {
    var replay: ReducerReplay<R>
    init(_ replay: ReducerReplay<R>) { self.replay = replay }
}

/// Every module's reducer state and every projection's value, rebuilt by folding the log.
///
/// Give it events in log order with ``apply(_:)``, then read ``snapshot()``. It needs no bus
/// and no other process: `bureau replay` and the front-end's time travel are built on it.
public final class LogReplay {
    public private(set) var reducers: [AnyReducerReplay]
    public let projections: [AnyProjection]
    private var folds: [ProjectionFold]
    /// The position of the last event applied; 0 before the first.
    public private(set) var position: UInt64 = 0
    /// The commit time of the last event applied.
    public private(set) var time: CommitTime?
    /// How many events were applied.
    public private(set) var eventCount = 0

    public init(reducers: [any Reducer], projections: [AnyProjection]) {
        self.reducers = reducers.map { AnyReducerReplay.of($0) }
        self.projections = projections
        folds = projections.map { $0.fold() }
    }

    private init(copying other: LogReplay) {
        reducers = other.reducers.map { $0.copy() }
        projections = other.projections
        folds = other.folds.map { $0.copy() }
        position = other.position
        time = other.time
        eventCount = other.eventCount
    }

    /// An independent replay from the same point, for going back to it later. Cheap: states
    /// are values, shared until one side changes them.
    public func copy() -> LogReplay { LogReplay(copying: self) }

    /// Every reducer and projection of `registry`, or only `module`'s when it is given.
    public convenience init(registry: ModuleRegistry, module: String? = nil) {
        let modules = registry.modules.filter { module == nil || $0.name == module }
        self.init(reducers: modules.compactMap(\.reducer), projections: modules.flatMap(\.projections))
    }

    /// Folds `event` into every reducer and projection; events must come in log order.
    public func apply(_ event: StoredEvent) {
        for reducer in reducers { reducer.apply(event) }
        for fold in folds { fold.apply(event) }
        position = event.position
        time = event.commitTime
        eventCount += 1
    }

    /// The states and values as of the last event applied.
    public func snapshot() throws -> ReplaySnapshot {
        var modules: [ReplaySnapshot.ModuleState] = []
        for reducer in reducers {
            modules.append(
                ReplaySnapshot.ModuleState(
                    module: reducer.module, inputs: reducer.inputCount, lastInput: reducer.position,
                    malformedInputs: reducer.malformedCount, state: try reducer.state()))
        }
        var values: [ReplaySnapshot.ProjectionValue] = []
        for (projection, fold) in zip(projections, folds) {
            values.append(
                ReplaySnapshot.ProjectionValue(
                    name: projection.name, value: try JSONValue(parsing: try fold.json()), text: fold.render()))
        }
        return ReplaySnapshot(position: position, time: time, modules: modules, projections: values)
    }
}

/// What replay rebuilt at one position: each reducer's state and each projection's value.
public struct ReplaySnapshot: Sendable, Equatable {
    public struct ModuleState: Sendable, Equatable {
        public let module: String
        /// Inputs applied up to the position.
        public let inputs: Int
        /// The position of the last of them; 0 if none.
        public let lastInput: UInt64
        public let malformedInputs: Int
        /// The reducer's state, as a snapshot holds it.
        public let state: JSONValue
    }

    public struct ProjectionValue: Sendable, Equatable {
        public let name: String
        public let value: JSONValue
        /// The value as `bureau show` prints it.
        public let text: String
    }

    /// The last event folded in; 0 for the empty log.
    public let position: UInt64
    public let time: CommitTime?
    public let modules: [ModuleState]
    public let projections: [ProjectionValue]

    public func module(_ name: String) -> ModuleState? { modules.first { $0.module == name } }
    public func projection(_ name: String) -> ProjectionValue? { projections.first { $0.name == name } }

    /// Everything as one JSON document: position, time, modules (by name), projections (by name).
    public var json: JSONValue {
        .object([
            ("position", .integer(position)),
            ("time", time.map { .string("\($0)") } ?? .null),
            (
                "modules",
                .object(
                    modules.map { module in
                        (
                            module.module,
                            .object([
                                ("inputs", .integer(module.inputs)), ("lastInput", .integer(module.lastInput)),
                                ("malformedInputs", .integer(module.malformedInputs)), ("state", module.state),
                            ])
                        )
                    })
            ),
            ("projections", .object(projections.map { ($0.name, $0.value) })),
        ])
    }

    /// What changed from `self` to `later`: per reducer state (`"watchlist"`) and per
    /// projection (`"projection watchlist"`), only those that changed.
    public func changes(to later: ReplaySnapshot) -> [StateChange] {
        var result: [StateChange] = []
        for module in later.modules {
            let before = self.module(module.module)?.state ?? .null
            let differences = before.differences(to: module.state)
            if !differences.isEmpty { result.append(StateChange(owner: module.module, differences: differences)) }
        }
        for projection in later.projections {
            let before = self.projection(projection.name)?.value ?? .null
            let differences = before.differences(to: projection.value)
            if !differences.isEmpty {
                result.append(StateChange(owner: "projection " + projection.name, differences: differences))
            }
        }
        return result
    }
}

/// The fields of one reducer's state, or one projection's value, that an event changed.
public struct StateChange: Sendable, Equatable {
    /// The module (its reducer state) or `projection NAME`.
    public let owner: String
    public let differences: [FieldDifference]
}

/// One event and what it did: the snapshots before and after it, and their difference.
public struct ReplayStep: Sendable {
    public let event: StoredEvent
    public let before: ReplaySnapshot
    public let after: ReplaySnapshot
    public var changes: [StateChange] { before.changes(to: after) }
}

/// Time travel over a log directory: the states at any position, and what one event changed.
///
/// For a front-end that steps forward and back. Going forward continues the fold; going back
/// folds again from the start (the log is the only copy of the past), so recent snapshots are
/// kept to make stepping back and forth over them immediate.
public final class ReplayTimeline {
    public let directory: String
    private let makeReplay: () -> LogReplay
    private var replay: LogReplay
    private var cache: [UInt64: ReplaySnapshot] = [:]
    private var cacheOrder: [UInt64] = []
    private let cacheLimit = 256

    /// A timeline over the log in `directory` (a data directory's `log`) with these modules.
    public init(directory: String, registry: ModuleRegistry, module: String? = nil) {
        self.directory = directory
        makeReplay = { LogReplay(registry: registry, module: module) }
        replay = makeReplay()
    }

    /// A timeline with explicit reducers and projections (tests, a changed reducer).
    public init(directory: String, reducers: [any Reducer], projections: [AnyProjection]) {
        self.directory = directory
        makeReplay = { LogReplay(reducers: reducers, projections: projections) }
        replay = makeReplay()
    }

    /// The log's last committed position, read from the files now.
    public func head() throws -> UInt64 {
        let cursor = try LogCursor(directory: directory, after: max(replay.position, 1) - 1)
        var last = replay.position
        while let record = try cursor.next() { last = record.position }
        return last
    }

    /// The states after the event at `position` (0: before any); past the end of the log,
    /// the states at its end. `progress` hears the position folded so far.
    public func snapshot(at position: UInt64, progress: (UInt64) -> Void = { _ in }) throws -> ReplaySnapshot {
        if let cached = cache[position] { return cached }
        try fold(to: position, progress: progress)
        let snapshot = try replay.snapshot()
        // Past the end the log may still grow: only a position reached is certain.
        if replay.position == position { remember(snapshot, at: position) }
        return snapshot
    }

    /// The event at `position` and the snapshots either side of it; nil if the log has no such position.
    public func step(at position: UInt64, progress: (UInt64) -> Void = { _ in }) throws -> ReplayStep? {
        guard position >= 1, let event = try event(at: position) else { return nil }
        let before = try snapshot(at: position - 1, progress: progress)
        let after = try snapshot(at: position, progress: progress)
        return ReplayStep(event: event, before: before, after: after)
    }

    /// The event at `position`, read from the files; nil past the end.
    public func event(at position: UInt64) throws -> StoredEvent? {
        guard position >= 1 else { return nil }
        let cursor = try LogCursor(directory: directory, after: position - 1, limit: position)
        guard let record = try cursor.next() else { return nil }
        return try StoredEvent(envelopeBytes: record.body)
    }

    /// The position of the last event committed at or before `time`; 0 if none is.
    public func position(atOrBefore time: CommitTime) throws -> UInt64 {
        let cursor = try LogCursor(directory: directory, after: 0)
        var found: UInt64 = 0
        while let record = try cursor.next() {
            let event = try StoredEvent(envelopeBytes: record.body)
            if event.commitTime > time { break }
            found = event.position
        }
        return found
    }

    private func fold(to position: UInt64, progress: (UInt64) -> Void) throws {
        if position < replay.position { replay = makeReplay() }
        guard position > replay.position else { return }
        let cursor = try LogCursor(directory: directory, after: replay.position, limit: position)
        while let record = try cursor.next() {
            replay.apply(try StoredEvent(envelopeBytes: record.body))
            progress(record.position)
        }
    }

    private func remember(_ snapshot: ReplaySnapshot, at position: UInt64) {
        if cache.updateValue(snapshot, forKey: position) == nil { cacheOrder.append(position) }
        if cacheOrder.count > cacheLimit { cache[cacheOrder.removeFirst()] = nil }
    }
}
