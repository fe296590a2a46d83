import Bus
import EventLog
import Logging
import ZeroMQBus

/// A bus daemon running in the test process on a temporary data directory.
public final class TestBus: @unchecked Sendable {
    public let directory: TemporaryDirectory
    public let location: BusLocation
    public private(set) var daemon: RunningBusDaemon?

    public init(
        durability: Durability = .always, heartbeat: Duration = .milliseconds(100),
        configure: (inout BusDaemon.Configuration) -> Void = { _ in }
    ) throws {
        directory = try TemporaryDirectory("bus")
        location = BusLocation(dataDirectory: directory.file("data"))
        try start(durability: durability, heartbeat: heartbeat, configure: configure)
    }

    /// Starts the daemon again on the same directory (after ``stop()``).
    public func start(
        durability: Durability = .always, heartbeat: Duration = .milliseconds(100),
        configure: (inout BusDaemon.Configuration) -> Void = { _ in }
    ) throws {
        var configuration = BusDaemon.Configuration(location: location)
        configuration.durability = durability
        configuration.heartbeatInterval = heartbeat
        configure(&configuration)
        daemon = try BusDaemon(configuration: configuration, logger: TestLogging.logger("bus")).start()
    }

    public func stop() {
        daemon?.stop()
        daemon = nil
    }

    public func client(
        _ process: String = "test", configure: (inout ZeroMQBusClient.Options) -> Void = { _ in }
    ) throws
        -> ZeroMQBusClient
    {
        var options = ZeroMQBusClient.Options(process: process)
        options.publishTimeout = .seconds(20)
        configure(&options)
        return try ZeroMQBusClient(location: location, options: options, logger: TestLogging.logger(process))
    }

    deinit {
        daemon?.stop()
    }
}

/// Loggers for tests: quiet unless BUREAU_TEST_LOG is set.
public enum TestLogging {
    public static func logger(_ label: String) -> Logger {
        var logger = Logger(label: label) { label in
            if let level = ProcessInfo.processInfo.environment["BUREAU_TEST_LOG"], !level.isEmpty {
                return StreamLogHandler.standardError(label: label)
            }
            return SwiftLogNoOpLogHandler()
        }
        if let level = ProcessInfo.processInfo.environment["BUREAU_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) {
            logger.logLevel = level
        }
        return logger
    }
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
