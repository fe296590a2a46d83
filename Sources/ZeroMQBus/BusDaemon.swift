import BureauSchemas
import Bus
import EventLog
import Logging
import ServiceLifecycle
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

    /// - Parameter onReady: called once the daemon is serving (sockets bound, threads running).
    public init(configuration: Configuration, logger: Logger, onReady: @escaping @Sendable () -> Void = {}) {
        self.configuration = configuration
        self.logger = logger
        self.onReady = onReady
    }

    public func run() async throws {
        let running = try start()
        onReady()
        try await withGracefulShutdownHandler {
            try await running.waitUntilStopped()
        } onGracefulShutdown: {
            running.requestStop()
        }
        running.stop()
    }

    /// Takes the log, binds the sockets, writes bus.json and starts the loop threads.
    public func start() throws -> RunningBusDaemon {
        let location = configuration.location
        if let problem = location.socketPathProblem { throw BusError.unusableLocation(problem) }
        try Self.prepareDirectories(location)

        var options = FileEventLog.Options()
        options.durability = configuration.durability
        options.segmentSize = configuration.segmentSize
        options.deduplicationWindow = configuration.deduplicationWindow
        options.fileSystem = configuration.fileSystem
        let log = try FileEventLog(directory: location.logDirectory, options: options, logger: logger)
        do {
            return try RunningBusDaemon(configuration: configuration, log: log, logger: logger)
        } catch {
            try? log.close()
            throw error
        }
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
