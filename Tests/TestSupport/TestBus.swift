import Bus
import BusTesting
import EventLog
import Guards
import Logging
import Synchronization
import ZeroMQBus

/// A bus daemon running in the test process on a temporary data directory.
///
/// Starting and stopping it wait for files to be synced and for its threads to end: both run
/// on a thread of their own, never on the cooperative pool, so both are awaited.
public final class TestBus: @unchecked Sendable {
    public let directory: TemporaryDirectory
    public let location: BusLocation
    public private(set) var daemon: RunningBusDaemon?

    public init(
        durability: Durability = .always, heartbeat: Duration = .milliseconds(100),
        configure: (inout BusDaemon.Configuration) -> Void = { _ in }
    ) async throws {
        directory = try TemporaryDirectory("bus")
        location = BusLocation(dataDirectory: directory.file("data"))
        try await start(durability: durability, heartbeat: heartbeat, configure: configure)
    }

    /// Starts the daemon again on the same directory (after ``stop()``).
    public func start(
        durability: Durability = .always, heartbeat: Duration = .milliseconds(100),
        configure: (inout BusDaemon.Configuration) -> Void = { _ in }
    ) async throws {
        var configuration = BusDaemon.Configuration(location: location)
        configuration.durability = durability
        configuration.heartbeatInterval = heartbeat
        configure(&configuration)
        daemon = try await BusDaemon(configuration: configuration, logger: TestLogging.logger("bus"))
            .startOffThePool()
    }

    /// Stops the daemon: its log synced, its threads ended.
    public func stop() async {
        let daemon = self.daemon
        self.daemon = nil
        await daemon?.stopOffThePool()
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
        // Released while running: stopped on a thread of its own, the directory kept until then.
        daemon?.stopInTheBackground(keeping: directory)
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

/// A logger whose lines a test reads back: what a library said, at which level.
public final class CapturedLog: Sendable {
    public struct Line: Sendable {
        public let level: Logger.Level
        public let message: String
    }

    private struct Waiter {
        let matches: @Sendable (Line) -> Bool
        let continuation: CheckedContinuation<Line?, Never>
    }

    private struct State {
        var lines: [Line] = []
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
    }

    private let captured = Mutex(State())

    public init() {}

    /// Every line said so far, in order.
    public var lines: [Line] { captured.withLock { $0.lines } }

    /// The first line said, before or after this call, for which `matches` holds; nil if none
    /// is said within `timeout`. Awaited, not polled: each line is offered to the waiters as it
    /// is said. `matches` must not use this log.
    public func line(
        within timeout: Duration = .seconds(10), where matches: @escaping @Sendable (Line) -> Bool
    ) async -> Line? {
        await Timeout.result(within: timeout) { await self.next(where: matches) } ?? nil
    }

    private func next(where matches: @escaping @Sendable (Line) -> Bool) async -> Line? {
        let id = captured.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let found = captured.withLock { state -> Line?? in
                    if let line = state.lines.first(where: matches) { return .some(line) }
                    // Cancelled before it was kept: the handler below found nothing to resume.
                    if Task.isCancelled { return .some(nil) }
                    state.waiters[id] = Waiter(matches: matches, continuation: continuation)
                    return nil
                }
                if let found { continuation.resume(returning: found) }
            }
        } onCancel: {
            captured.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: nil)
        }
    }

    /// A logger at `trace` whose every line is kept here.
    public func logger(_ label: String) -> Logger {
        var logger = Logger(label: label) { _ in Handler(log: self) }
        logger.logLevel = .trace
        return logger
    }

    fileprivate func keep(_ line: Line) {
        let answered = captured.withLock { state in
            state.lines.append(line)
            let matched = state.waiters.filter { $0.value.matches(line) }
            for id in matched.keys { state.waiters[id] = nil }
            return matched.values.map(\.continuation)
        }
        for continuation in answered { continuation.resume(returning: line) }
    }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            log.keep(Line(level: event.level, message: event.message.description))
        }
    }
}
