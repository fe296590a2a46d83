import Bus
import EventLog

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Every module's reducer state and every projection's value, rebuilt by folding the log.
///
/// Give it events in log order with ``apply(_:)``, then read ``snapshot()``. It needs no bus
/// and no other process: `bureau replay` and the front-end's time travel are built on it.
public final class LogReplay {
    public let reducers: [AnyReducerReplay]
    public let projections: [AnyProjection]
    // Constants and one variable, because `apply` runs for every event of the log: variables
    // of a class cost a run-time exclusivity check at each access, and their elements a retain.
    private let folds: [ProjectionFold]
    private var progress = Progress()
    /// `reducers` and `folds` again, unretained, for `apply`: those arrays keep them alive, and
    /// a retain and a release of each for every event cost a tenth of replay's folding thread.
    private let unretainedReducers: [Unmanaged<AnyReducerReplay>]
    private let unretainedFolds: [Unmanaged<ProjectionFold>]

    /// The position of the last event applied; 0 before the first.
    public var position: UInt64 { progress.position }
    /// The commit time of the last event applied.
    public var time: CommitTime? { progress.time }
    /// How many events were applied.
    public var eventCount: Int { progress.eventCount }

    private struct Progress {
        var position: UInt64 = 0
        var time: CommitTime?
        var eventCount = 0
    }

    public init(reducers: [any Reducer], projections: [AnyProjection]) {
        self.reducers = reducers.map { AnyReducerReplay.of($0) }
        self.projections = projections
        folds = projections.map { $0.fold() }
        unretainedReducers = self.reducers.map { Unmanaged.passUnretained($0) }
        unretainedFolds = folds.map { Unmanaged.passUnretained($0) }
    }

    private init(copying other: LogReplay) {
        reducers = other.reducers.map { $0.copy() }
        projections = other.projections
        folds = other.folds.map { $0.copy() }
        progress = other.progress
        unretainedReducers = reducers.map { Unmanaged.passUnretained($0) }
        unretainedFolds = folds.map { Unmanaged.passUnretained($0) }
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
        for reducer in unretainedReducers { _ = reducer._withUnsafeGuaranteedRef { $0.advance(event) } }
        for fold in unretainedFolds { fold._withUnsafeGuaranteedRef { $0.apply(event) } }
        progress.position = event.position
        progress.time = event.commitTime
        progress.eventCount += 1
    }

    /// What each projection passed over, by name, in the order of ``projections``.
    public var passedOver: [(projection: String, passedOver: PassedOver)] {
        zip(projections, folds).map { ($0.name, $1.passedOver) }
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
