import Bus
import EventLog
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
    /// Reports the process's consumers to the bus; nil where nothing reports (tests).
    public let progress: ProgressReporter?

    public init(
        client: any EventBus, snapshots: any SnapshotStore, snapshotEvery: Int = 10_000, logger: Logger,
        statistics: HostStatistics? = nil, settings: [String: String] = [:], progress: ProgressReporter? = nil
    ) {
        self.settings = settings
        self.progress = progress
        self.client = client
        self.snapshots = snapshots
        var options = ReducerHostOptions()
        options.snapshotEvery = snapshotEvery
        hostOptions = options
        self.logger = logger
        self.statistics = statistics
    }

    /// The metrics of the consumer `module` runs: reported to the bus when the process reports.
    public func consumerMetrics(_ module: String) -> ConsumerMetrics {
        progress?.consumer(module) ?? ConsumerMetrics(consumer: module, process: client.process)
    }
}
