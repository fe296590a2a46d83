import Bus
import Logging
import ServiceLifecycle

/// What a process gives the hosts it builds.
public struct HostEnvironment: Sendable {
    public let client: any EventBus
    public let snapshots: any SnapshotStore
    public let hostOptions: ReducerHostOptions
    public let logger: Logger
    public let statistics: HostStatistics?
    /// Settings for adapters, by name (e.g. "rates-url"), from the command line.
    public let settings: [String: String]

    public init(
        client: any EventBus, snapshots: any SnapshotStore, snapshotEvery: Int = 10_000, logger: Logger,
        statistics: HostStatistics? = nil, settings: [String: String] = [:]
    ) {
        self.settings = settings
        self.client = client
        self.snapshots = snapshots
        var options = ReducerHostOptions()
        options.snapshotEvery = snapshotEvery
        hostOptions = options
        self.logger = logger
        self.statistics = statistics
    }
}
