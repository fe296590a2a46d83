import Bus
import Logging
import ServiceLifecycle

/// A feature as a process sees it: what it is called, its commands, its projections, and how
/// to build its reducer host. A composition root collects them in a ``ModuleRegistry``.
public struct FeatureModule: Sendable {
    public let name: String
    public let summary: String
    public let commands: [CommandSpec]
    public let projections: [AnyProjection]
    /// Builds the service that hosts the module (a reducer host, an adapter); nil for a
    /// feature with nothing to run (system). Throws for settings it cannot use.
    public let makeHost: (@Sendable (HostEnvironment) throws -> any Service)?
    /// The module's reducer, for tools that run it offline (replay, verification); nil for an
    /// adapter or a feature without one.
    public private(set) var reducer: (any Reducer)? = nil
    /// How the older shapes of the events this module owns read as today's.
    public let upcasters: [any Upcaster]
    /// The types the module's code reads besides its reducer's inputs and its projections'
    /// (an adapter's inputs): with those, what a chain of upcasters may end at.
    public let consumes: [String]
    /// Whether its host reports its progress to the bus as a consumer named after the module
    /// (``HostEnvironment/consumerMetrics(_:)``): a process that runs it and from which the bus
    /// has no report is one whose progress is unknown (`bureau status`).
    public let reportsProgress: Bool

    /// - Parameter reportsProgress: whether the host `makeHost` builds reports its progress
    ///   under the module's name.
    public init(
        name: String, summary: String, commands: [CommandSpec] = [], projections: [AnyProjection] = [],
        upcasters: [any Upcaster] = [], consumes: [String] = [], reportsProgress: Bool = false,
        makeHost: (@Sendable (HostEnvironment) throws -> any Service)? = nil
    ) {
        self.name = name
        self.summary = summary
        self.commands = commands
        self.projections = projections
        self.upcasters = upcasters
        self.consumes = consumes
        self.reportsProgress = reportsProgress && makeHost != nil
        self.makeHost = makeHost
    }

    /// A feature whose reducer runs in a ``ReducerHost``.
    public init<R: Reducer>(
        reducer: R, summary: String, commands: [CommandSpec] = [], projections: [AnyProjection] = [],
        upcasters: [any Upcaster] = []
    ) {
        self.init(
            name: reducer.module, summary: summary, commands: commands, projections: projections,
            upcasters: upcasters, reportsProgress: true,
            makeHost: { environment in
                ReducerHost(
                    reducer: reducer, client: environment.client, snapshots: environment.snapshots,
                    options: environment.hostOptions, logger: environment.logger, statistics: environment.statistics,
                    metrics: environment.consumerMetrics(reducer.module))
            })
        self.reducer = reducer
    }

    /// Every type this module's code reads: its reducer's inputs, its projections', and what
    /// else it declares.
    public var readTypes: [String] {
        (reducer?.inputTypes ?? []) + projections.flatMap(\.inputTypes) + consumes
    }
}
