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
        for reducer in reducers { reducer.advance(event) }
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
