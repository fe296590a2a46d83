import Bus
import EventLog
import Foundation
import Guards
import Logging
import Runtime
import ServiceLifecycle
import Supervisor
import Synchronization
import ZeroMQBus

/// What a bus-level test runs against: a real multi-process deployment
/// (``processes(_:executable:timeout:logger:)``), or one already running
/// (``existing(dataDirectory:logger:)``), as `bureau test` runs them; the test kit (`BusTesting`)
/// adds the tiers inside a test's process, the in-memory twin and an in-process daemon. The same
/// fixtures run on every one.
///
/// Call ``stop()`` at the end: it shuts down what the deployment started (in reverse order,
/// gracefully) and removes its directory.
public final class TestDeployment: Sendable {
    /// The deployment's data directory; nil for a bus in memory.
    public let location: BusLocation?
    /// A connection to the deployment's bus, for the test's own publishing and subscribing.
    public let client: any EventBus
    private let directory: TemporaryDirectory?
    private let teardown: Teardown
    private let group: ServiceGroup?
    private let running: Task<Void, any Error>?
    private let stopped = Mutex(false)
    private let logger: Logger
    /// Makes a new connection to the bus for a process of the given name.
    private let connector: @Sendable (String) throws -> any EventBus

    /// What stops a deployment's own servers (a daemon in the test's process), besides the
    /// group and the client every deployment has.
    package struct Teardown: Sendable {
        /// Stops them, awaited by ``stop()`` after the group and the client, before the
        /// directory goes.
        var stop: @Sendable () async -> Void
        /// Stops them without waiting, keeping the directory until they have stopped: for a
        /// deployment released without ``stop()``.
        var abandon: @Sendable (TemporaryDirectory?) -> Void

        package init(
            stop: @escaping @Sendable () async -> Void, abandon: @escaping @Sendable (TemporaryDirectory?) -> Void
        ) {
            self.stop = stop
            self.abandon = abandon
        }

        /// Nothing beyond the group and the client.
        package static let none = Teardown(stop: {}, abandon: { _ in })
    }

    /// A deployment of what the caller started: `group` (running as `running`) hosts its
    /// modules and services, `teardown` stops the rest; ``stop()`` removes `directory`.
    package init(
        location: BusLocation?, client: any EventBus, connector: @escaping @Sendable (String) throws -> any EventBus,
        directory: TemporaryDirectory?, teardown: Teardown = .none, group: ServiceGroup?,
        running: Task<Void, any Error>?, logger: Logger
    ) {
        self.logger = logger
        self.location = location
        self.client = client
        self.connector = connector
        self.directory = directory
        self.teardown = teardown
        self.group = group
        self.running = running
    }

    /// A real deployment of `bureau` processes on a fresh directory, supervised as `bureau up`
    /// does; returns when every process is ready.
    ///
    /// - Parameters:
    ///   - executable: the `bureau` binary the processes run.
    ///   - timeout: how long to wait for every process to be ready.
    public static func processes(
        _ deployment: Deployment, executable: String, timeout: Duration = .seconds(120), logger: Logger
    ) async throws -> TestDeployment {
        let directory = try TemporaryDirectory("bus-test")
        let location = BusLocation(dataDirectory: directory.file("data"))
        try OwnerOnly.makeDirectory(location.runDirectory)
        let ready = ReadySignal()
        var configuration = Supervisor.Configuration(
            deployment: deployment, location: location, executable: executable, console: false)
        configuration.onReady = { _ in ready.fire(nil) }
        let supervisor = try Supervisor(configuration: configuration, logger: logger)
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: supervisor, successTerminationBehavior: .gracefullyShutdownGroup)],
                logger: logger))
        let running = Task {
            do {
                try await group.run()
                ready.fire(BusTestingError("the deployment stopped before it was ready"))
            } catch {
                ready.fire(error)
                throw error
            }
        }
        let failure: (any Error)? =
            await Timeout.result(within: timeout) { await ready.wait() }
            ?? BusTestingError("the deployment was not ready within \(timeout.secondsText(tenths: true)) s")
        if let failure {
            await group.triggerGracefulShutdown()
            _ = try? await running.value
            // The directory goes with this function: say what the processes said first.
            throw BusTestingError("\(failure)" + outputTails(in: location.processLogDirectory))
        }
        let client: ZeroMQBusClient
        do {
            client = try makeClient(location: location, logger: logger)
        } catch {
            await group.triggerGracefulShutdown()
            _ = try? await running.value
            throw error
        }
        return TestDeployment(
            location: location, client: client,
            connector: { try makeClient(location: location, process: $0, logger: logger) },
            directory: directory, group: group, running: running, logger: logger)
    }

    /// A deployment something else runs (`bureau up`), found by its data directory; ``stop()`` leaves it running.
    public static func existing(dataDirectory: String, logger: Logger) throws -> TestDeployment {
        let location = BusLocation(dataDirectory: dataDirectory)
        return TestDeployment(
            location: location, client: try makeClient(location: location, logger: logger),
            connector: { try makeClient(location: location, process: $0, logger: logger) }, directory: nil,
            group: nil, running: nil, logger: logger)
    }

    /// A deployment already running whose bus is on another machine (`bureau test --bus`):
    /// reached over TCP, with CURVE when `remote` has keys.
    public static func existing(remote: RemoteBus, logger: Logger) throws -> TestDeployment {
        @Sendable func connect(_ process: String) throws -> ZeroMQBusClient {
            try ZeroMQBusClient(remote: remote, options: options(process: process), logger: logger)
        }
        return TestDeployment(
            location: BusLocation(dataDirectory: BusLocation.defaultDataDirectory), client: try connect("bus-test"),
            connector: { try connect($0) }, directory: nil, group: nil, running: nil, logger: logger)
    }

    /// A new connection to this deployment's bus, as another process named `process` would make
    /// (on the in-memory tier, a connection to the same bus): for a service under test and an
    /// observer beside it. The caller closes it.
    public func connect(_ process: String) throws -> any EventBus {
        try connector(process)
    }

    /// A fixture on this deployment's bus.
    public func fixture(router: CommandRouter, options: BusFixture.Options = BusFixture.Options()) -> BusFixture {
        BusFixture(client: client, router: router, options: options)
    }

    /// Runs `body` with this deployment, then stops it, also when `body` throws. A module or
    /// service of the deployment that failed while `body` ran fails the run too, though `body`
    /// passed: what a test of it checked happened beside a failure.
    public func run<T: Sendable>(_ body: (TestDeployment) async throws -> T) async throws -> T {
        let result: T
        do {
            result = try await body(self)
        } catch {
            await stop()
            throw error
        }
        if let failure = await shutDown() {
            throw BusTestingError("a module or service of the deployment failed: \(failure)")
        }
        return result
    }

    /// Stops what this deployment started (gracefully, in reverse order) and removes its
    /// directory; a second call does nothing.
    /// A module or service that failed is logged at error level.
    public func stop() async {
        if let failure = await shutDown() {
            logger.error("a module or service of the deployment failed", metadata: ["error": "\(failure)"])
        }
    }

    /// ``stop()``'s work; returns what ended the deployment's modules and services if it was a
    /// failure. A second call does nothing.
    private func shutDown() async -> (any Error)? {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return nil }
        // Hosted modules publish through the client: stop them before closing it.
        var failure: (any Error)?
        if let group {
            await group.triggerGracefulShutdown()
            do {
                try await running?.value
            } catch {
                failure = error
            }
        }
        client.close()
        await teardown.stop()
        if let directory { TemporaryDirectory.remove(directory.path) }
        return failure
    }

    deinit {
        // Released without stop(): end what runs here at least; a supervisor's children die
        // with their lifeline when its group ends.
        guard stopped.withLock({ !$0 }) else { return }
        client.close()
        if let group { Task { await group.triggerGracefulShutdown() } }
        teardown.abandon(directory)
    }

    /// The last lines each process wrote, indented under its name.
    private static func outputTails(in directory: String, lines: Int = 5) -> String {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
        var text = ""
        for name in names where name.hasSuffix(".log") {
            guard let content = try? String(contentsOfFile: directory + "/" + name, encoding: .utf8) else { continue }
            let tail = content.split(separator: "\n").suffix(lines)
            guard !tail.isEmpty else { continue }
            text += "\n  \(name.dropLast(4)):\n" + tail.map { "    " + $0 }.joined(separator: "\n")
        }
        return text
    }

    /// A client of the bus at `location` with a test's options (``options(process:)``).
    package static func makeClient(
        location: BusLocation, process: String = "bus-test", logger: Logger
    ) throws -> ZeroMQBusClient {
        try ZeroMQBusClient(location: location, options: options(process: process), logger: logger)
    }

    /// A client's options for a test: a publish may wait 20 s on a busy machine.
    package static func options(process: String) -> ZeroMQBusClient.Options {
        var options = ZeroMQBusClient.Options(process: process)
        options.publishTimeout = .seconds(20)
        return options
    }
}
