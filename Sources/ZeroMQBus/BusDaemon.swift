import BureauSchemas
import Bus
import EventLog
import Guards
import Logging
import Metrics
import ServiceLifecycle
import Synchronization
import ZeroMQ

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// The bus daemon: the only writer of the log, the sequencer and publisher of every event.
///
/// As a ``Service`` it runs until graceful shutdown (SIGTERM, SIGINT), then stops taking
/// requests, makes everything durable and releases the log. ``start()`` runs it without a
/// service group, for tests.
public struct BusDaemon: Service {
    public static let version = "0.1.0"

    public let configuration: Configuration
    private let logger: Logger
    private let onReady: @Sendable () -> Void
    /// Set when shutdown is asked for before the daemon is up.
    private let stopRequested = StopRequest()
    private let metrics: BusMetrics

    /// - Parameter onReady: called once the daemon is serving (sockets bound, threads running).
    public init(configuration: Configuration, logger: Logger, onReady: @escaping @Sendable () -> Void = {}) {
        self.configuration = configuration
        self.logger = logger
        self.onReady = onReady
        metrics = BusMetrics(factory: configuration.metricsFactory ?? MetricsSystem.factory)
    }

    /// Metric names the daemon records and what they mean (README, "Watching it run").
    public static var metricHelp: [String: String] { BusMetrics.help }

    public func run() async throws {
        var ready = false
        // Reopens after failures in quick succession wait longer each time (a store that keeps
        // failing must not be hammered); a daemon that ran a while starts afresh.
        let reopenBackoff = Backoff(initial: .milliseconds(100), maximum: .seconds(5), jitter: 0)
        var reopens = 0
        metrics.active.record(0)
        defer { metrics.active.record(0) }
        while true {
            // Opening a store may wait (a standby waits for the writer lock, a store retries a
            // server that does not answer): off the cooperative pool, and given up when
            // shutdown is asked for meanwhile.
            let running: RunningBusDaemon
            do {
                running = try await withGracefulShutdownHandler {
                    try await OwnThread.run(name: "bureau-open") { try self.start() }
                } onGracefulShutdown: {
                    stopRequested.set()
                }
            } catch  where stopRequested.isSet {
                // Asked to stop while it waited: nothing was started, nothing is lost.
                logger.notice("stopped before the log was open", metadata: ["bus.reason": "\(error)"])
                return
            }
            metrics.active.record(1)
            if !ready {
                ready = true
                onReady()
            }
            let opened = ContinuousClock.now
            do {
                try await withGracefulShutdownHandler {
                    try await running.waitUntilStopped()
                } onGracefulShutdown: {
                    stopRequested.set()
                    running.requestStop()
                }
                running.stop()
                return
            } catch EventLogError.failed(let reason) where configuration.store != nil && !stopRequested.isSet {
                // A store whose connection failed may have a promoted standby behind the same
                // URL: recover from what the store holds, as a restart would, in this process.
                running.stop()
                metrics.active.record(0)
                metrics.storeError("failed")
                metrics.storeReopens.increment()
                reopens = ContinuousClock.now - opened > .seconds(30) ? 1 : reopens + 1
                let delay = reopenBackoff.nominalDelay(attempt: reopens)
                logger.error(
                    "the store failed; reopening it from what it holds",
                    metadata: ["bus.reason": "\(reason)", "bus.reopen_in_ms": "\(delay.inMilliseconds)"])
                do {
                    // A shutdown asked for meanwhile ends the wait, and the daemon with it.
                    try await cancelWhenGracefulShutdown { try await Task.sleep(for: delay) }
                } catch {
                    logger.notice("stopped while waiting to reopen the store")
                    return
                }
            } catch {
                running.stop()
                throw error
            }
        }
    }

    /// Takes the log, binds the sockets, writes bus.json and starts the loop threads.
    public func start() throws -> RunningBusDaemon {
        let location = configuration.location
        if let problem = location.socketPathProblem { throw BusError.unusableLocation(problem) }
        try Self.prepareDirectories(location)

        if let store = configuration.store {
            let log = try store.open(logger, { stopRequested.isSet })
            do {
                return try RunningBusDaemon(
                    configuration: configuration, log: log, recovery: nil, metrics: metrics, logger: logger)
            } catch {
                closeLog(log, after: error)
                throw error
            }
        }
        var options = FileEventLog.Options()
        options.durability = configuration.durability
        options.segmentSize = configuration.segmentSize
        options.deduplicationWindow = configuration.deduplicationWindow
        options.fileSystem = configuration.fileSystem
        let log = try FileEventLog(directory: location.logDirectory, options: options, logger: logger)
        do {
            return try RunningBusDaemon(
                configuration: configuration, log: log, recovery: log.recovery, metrics: metrics, logger: logger)
        } catch {
            closeLog(log, after: error)
            throw error
        }
    }

    /// Closes the log of a daemon that failed to start: what failed is thrown, and a close that
    /// fails too (its last sync, its recovery point) is logged, since the next open recovers.
    private func closeLog(_ log: any EventLog, after failure: any Error) {
        do {
            try log.close()
        } catch {
            logger.error(
                "the log could not be closed after the daemon failed to start",
                metadata: ["bus.error": "\(error)", "bus.reason": "\(failure)"])
        }
    }

    /// Whether shutdown was asked for, shared by the copies of a daemon value.
    final class StopRequest: Sendable {
        private let flag = Atomic(false)
        var isSet: Bool { flag.load(ordering: .acquiring) }
        func set() { flag.store(true, ordering: .releasing) }
    }

    /// Creates the data directory and the run directory, owner-only (0700) whatever the umask;
    /// makes existing ones owner-only too.
    static func prepareDirectories(_ location: BusLocation) throws {
        for path in [location.dataDirectory, location.runDirectory] {
            var info = stat()
            if stat(path, &info) == 0, info.st_uid != geteuid() {
                throw BusError.unusableLocation(
                    "\(path) belongs to another user; a deployment's data must be its owner's alone")
            }
            do {
                try OwnerOnly.makeDirectory(path)
            } catch {
                throw BusError.unusableLocation("\(error)")
            }
        }
    }
}
