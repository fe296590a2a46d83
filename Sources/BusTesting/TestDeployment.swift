import Bus
import EventLog
import Foundation
import Guards
import InMemoryBus
import Logging
import Runtime
import ServiceLifecycle
import Supervisor
import Synchronization
import ZeroMQBus

/// What a bus-level test runs against, in tiers: a bus inside the test process with no daemon
/// (``inMemory(modules:settings:services:logger:)``), a real bus daemon on a temporary directory
/// with modules, adapters and servers beside it (``inProcess(modules:settings:services:logger:)``),
/// a real multi-process deployment (``processes(_:executable:timeout:logger:)``), or one already
/// running (``existing(dataDirectory:logger:)``). The same fixtures run on every tier.
///
/// Call ``stop()`` at the end: it shuts down what the deployment started (in reverse order,
/// gracefully) and removes its directory.
public final class TestDeployment: Sendable {
    /// The deployment's data directory; nil for a bus in memory.
    public let location: BusLocation?
    /// A connection to the deployment's bus, for the test's own publishing and subscribing.
    public let client: any EventBus
    private let directory: TemporaryDirectory?
    private let daemon: RunningBusDaemon?
    private let group: ServiceGroup?
    private let running: Task<Void, any Error>?
    private let stopped = Mutex(false)
    private let logger: Logger
    /// Makes a new connection to the bus for a process of the given name.
    private let connector: @Sendable (String) throws -> any EventBus

    private init(
        location: BusLocation?, client: any EventBus, connector: @escaping @Sendable (String) throws -> any EventBus,
        directory: TemporaryDirectory?, daemon: RunningBusDaemon?, group: ServiceGroup?,
        running: Task<Void, any Error>?, logger: Logger
    ) {
        self.logger = logger
        self.location = location
        self.client = client
        self.connector = connector
        self.directory = directory
        self.daemon = daemon
        self.group = group
        self.running = running
    }

    /// A bus inside this process, with no daemon, no sockets and no files, with `modules`
    /// hosted beside it and `services` (adapters, servers) built on it: the fastest tier, for
    /// tests of modules and adapters at the bus.
    ///
    /// - Parameter settings: adapter settings by name (`rates-url`, `booking-url`), as `bureau run --set` takes them.
    public static func inMemory(
        modules: [FeatureModule] = [], settings: [String: String] = [:],
        services: [@Sendable (any EventBus) throws -> any Service] = [], logger: Logger
    ) async throws -> TestDeployment {
        let bus = InMemoryBus(process: "bus-test")
        let (group, running) = try host(
            modules: modules, settings: settings, services: services, on: bus, logger: logger)
        return TestDeployment(
            location: nil, client: bus, connector: { bus.connection(process: $0) }, directory: nil, daemon: nil,
            group: group, running: running, logger: logger)
    }

    /// A bus daemon in this process on a fresh directory, with `modules` hosted beside it and
    /// `services` (adapters, servers) built on its client.
    ///
    /// - Parameter settings: adapter settings by name (`rates-url`, `booking-url`), as `bureau run --set` takes them.
    public static func inProcess(
        modules: [FeatureModule] = [], settings: [String: String] = [:],
        services: [@Sendable (any EventBus) throws -> any Service] = [], logger: Logger
    ) async throws -> TestDeployment {
        let directory = try TemporaryDirectory("bus-test")
        let location = BusLocation(dataDirectory: directory.file("data"))
        var configuration = BusDaemon.Configuration(location: location)
        configuration.heartbeatInterval = .milliseconds(100)
        let daemon = try await BusDaemon(configuration: configuration, logger: logger).startOffThePool()
        let client: ZeroMQBusClient
        let hosted: (ServiceGroup, Task<Void, any Error>)
        do {
            client = try makeClient(location: location, logger: logger)
            do {
                hosted = try host(modules: modules, settings: settings, services: services, on: client, logger: logger)
            } catch {
                client.close()
                throw error
            }
        } catch {
            await daemon.stopOffThePool()
            throw error
        }
        return TestDeployment(
            location: location, client: client,
            connector: { try makeClient(location: location, process: $0, logger: logger) },
            directory: directory, daemon: daemon, group: hosted.0, running: hosted.1, logger: logger)
    }

    /// Builds the hosts of `modules` and the `services` on `bus`, and runs them in a group.
    private static func host(
        modules: [FeatureModule], settings: [String: String],
        services: [@Sendable (any EventBus) throws -> any Service],
        on bus: any EventBus, logger: Logger
    ) throws -> (ServiceGroup, Task<Void, any Error>) {
        var hosted: [any Service] = []
        for module in modules {
            let environment = HostEnvironment(
                client: bus, snapshots: InMemorySnapshotStore(), logger: logger, settings: settings)
            if let host = try module.makeHost?(environment) { hosted.append(host) }
        }
        for make in services { hosted.append(try make(bus)) }
        let group = ServiceGroup(
            configuration: .init(
                services: hosted.map { .init(service: $0, successTerminationBehavior: .ignore) }, logger: logger))
        return (group, Task { try await group.run() })
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
            directory: directory, daemon: nil, group: group, running: running, logger: logger)
    }

    /// A deployment something else runs (`bureau up`), found by its data directory; ``stop()`` leaves it running.
    public static func existing(dataDirectory: String, logger: Logger) throws -> TestDeployment {
        let location = BusLocation(dataDirectory: dataDirectory)
        return TestDeployment(
            location: location, client: try makeClient(location: location, logger: logger),
            connector: { try makeClient(location: location, process: $0, logger: logger) }, directory: nil,
            daemon: nil, group: nil, running: nil, logger: logger)
    }

    /// A deployment already running whose bus is on another machine (`bureau test --bus`):
    /// reached over TCP, with CURVE when `remote` has keys.
    public static func existing(remote: RemoteBus, logger: Logger) throws -> TestDeployment {
        @Sendable func connect(_ process: String) throws -> ZeroMQBusClient {
            try ZeroMQBusClient(remote: remote, options: options(process: process), logger: logger)
        }
        return TestDeployment(
            location: BusLocation(dataDirectory: BusLocation.defaultDataDirectory), client: try connect("bus-test"),
            connector: { try connect($0) }, directory: nil, daemon: nil, group: nil, running: nil, logger: logger)
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
        await daemon?.stopOffThePool()
        if let directory { TemporaryDirectory.remove(directory.path) }
        return failure
    }

    deinit {
        // Released without stop(): end what runs here at least; a supervisor's children die
        // with their lifeline when its group ends.
        guard stopped.withLock({ !$0 }) else { return }
        client.close()
        if let group { Task { await group.triggerGracefulShutdown() } }
        daemon?.stopInTheBackground(keeping: directory)
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

    private static func makeClient(
        location: BusLocation, process: String = "bus-test", logger: Logger
    ) throws -> ZeroMQBusClient {
        try ZeroMQBusClient(location: location, options: options(process: process), logger: logger)
    }

    /// A client's options for a test: a publish may wait 20 s on a busy machine.
    private static func options(process: String) -> ZeroMQBusClient.Options {
        var options = ZeroMQBusClient.Options(process: process)
        options.publishTimeout = .seconds(20)
        return options
    }
}
