import Bus
import BusScenarios
import EventLog
import InMemoryBus
import InMemoryStores
import Logging
import Runtime
import ServiceLifecycle
import ZeroMQBus

/// The tiers inside a test's process: the in-memory twin (``inMemory(modules:settings:services:logger:)``)
/// and a real daemon on a temporary directory (``inProcess(modules:settings:services:logger:)``),
/// each with modules, adapters and servers hosted beside the bus (``BusTier`` picks one).
extension TestDeployment {
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
            location: nil, client: bus, connector: { bus.connection(process: $0) }, directory: nil,
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
        let teardown = Teardown(
            stop: { await daemon.stopOffThePool() }, abandon: { daemon.stopInTheBackground(keeping: $0) })
        return TestDeployment(
            location: location, client: client,
            connector: { try makeClient(location: location, process: $0, logger: logger) },
            directory: directory, teardown: teardown, group: hosted.0, running: hosted.1, logger: logger)
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
}
