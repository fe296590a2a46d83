import ArgumentParser
import Bus
import EventLog
import Foundation
import Guards
import Logging
import PostgresStore
import Runtime
import ServiceLifecycle
import ZeroMQBus

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Host feature reducers (any subset) in this process.",
        discussion: HelpText.prose(
            """
            Each reducer catches up from its snapshot in <data>/snapshots (with --store, in the
            store's database), then follows the bus; killing the process at any moment loses no
            output and duplicates none. A snapshot save that fails (a store failing over) is
            logged and tried again, never fatal: the store is reconnected to whichever of its
            hosts accepts writes. A module can be hosted by one process at a time. Stops cleanly
            on SIGTERM or SIGINT.

            Modules: \(Composition.registry().hostable.joined(separator: ", "))
            """)
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var connection: BusConnectionOptions
    @OptionGroup var store: StoreOptions
    @OptionGroup var readiness: ReadinessOptions
    @OptionGroup var metrics: MetricsOptions

    @OptionGroup var traces: TraceOptions

    @Argument(help: "The modules to host, e.g. watchlist reservations.")
    var modules: [String]

    @Option(help: "The process name stamped on what it publishes (default: the modules' names).")
    var process: String?

    @Option(
        help: "Write a snapshot every this many inputs, 1 to 10000000. (default: 10000)",
        transform: BoundedNumber.integers(in: 1...10_000_000))
    var snapshotEvery = 10_000

    @Option(
        name: .customLong("set"),
        help: ArgumentHelp(
            "An adapter setting, name=value: rates-url, poll-ms, timeout-ms, backoff-initial-ms, backoff-max-ms, booking-url, max-attempts.",
            valueName: "name=value"))
    var settings: [String] = []

    func validate() throws {
        let registry = Composition.registry()
        for module in modules where registry.module(named: module)?.makeHost == nil {
            throw ValidationError(
                "unknown module '\(module)'; this build hosts: \(registry.hostable.joined(separator: ", "))")
        }
        guard Set(modules).count == modules.count else { throw ValidationError("a module is named twice") }
        for setting in settings where !setting.contains("=") || setting.hasPrefix("=") {
            throw ValidationError("--set takes name=value, not '\(setting)'")
        }
    }

    var settingValues: [String: String] {
        Dictionary(
            settings.map { setting in
                // validate() refused a setting without a name before `=`.
                let parts = setting.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                return (String(parts.first ?? ""), parts.count > 1 ? String(parts[1]) : "")
            }, uniquingKeysWith: { _, last in last })
    }

    func run() async throws {
        try await run(composition: .product)
    }

    /// Hosts the modules as `composition` builds them; its upcasters are checked before anything
    /// starts (no lock taken, no connection made), and a set that does not close is refused.
    func run(composition: Composition) async throws {
        let upcasting = try composition.checkedUpcasting()
        global.bootstrapLogging()
        let logger = global.logger("bureau.run")
        let location = global.location
        let registry = composition.registry
        try OwnerOnly.makeDirectory(location.snapshotDirectory)
        // One host per module, across processes: a second one would publish the same outputs.
        var locks: [DirectoryLock] = []
        for module in modules {
            do {
                locks.append(try DirectoryLock(directory: location.snapshotDirectory, fileName: module + ".lock"))
            } catch EventLogError.locked(_, let pid, let command) {
                throw CLIError(
                    "module \(module) is already hosted by process \(pid.map(String.init) ?? "?") (\(command ?? "unknown"))"
                )
            }
        }
        defer { locks.forEach { $0.release() } }

        let processName = process ?? modules.joined(separator: "+")
        let endpoint = metrics.endpoint(process: processName, location: location, logger: logger)
        let client = try connection.client(
            process: processName, publishTimeout: .seconds(60), global: global, upcasting: upcasting)
        // Tells the bus how far each host has got: what the bus computes their lag from.
        let progress = ProgressReporter(client: client, logger: logger)
        // With a store, snapshots live in its database, so that a host restarted elsewhere resumes from them.
        // Connecting waits for a store that is not up yet (30 s at most): on a thread of its own.
        let snapshots: any SnapshotStore =
            if let url = try store.url() {
                try await OwnThread.run(name: "bureau-snapshot-store") { [logger = global.logger("bureau.snapshots")] in
                    try PostgresSnapshotStore(url: url, logger: logger)
                }
            } else {
                FileSnapshotStore(directory: location.snapshotDirectory, logger: global.logger("bureau.snapshots"))
            }
        var services: [any Service] = []
        var statistics: [HostStatistics] = []
        for module in modules {
            let hostStatistics = HostStatistics()
            let environment = HostEnvironment(
                client: client, snapshots: snapshots,
                snapshotEvery: snapshotEvery, logger: logger, statistics: hostStatistics, settings: settingValues,
                progress: progress)
            let host: (any Service)?
            do {
                host = try registry.module(named: module)?.makeHost?(environment)
            } catch {
                throw usageError("\(module): \(error)")
            }
            if let host {
                services.append(host)
                statistics.append(hostStatistics)
            }
        }
        // Ready once every host has caught up with the log (an adapter: found where it left off).
        let readiness = self.readiness
        let hosts = statistics
        services.append(
            OneShotService {
                for host in hosts { await host.waitUntilCaughtUp() }
                readiness.notify()
                logger.info("ready", metadata: ["cli.modules": "\(modules.joined(separator: " "))"])
            })
        let group = ServiceGroup(
            configuration: .init(
                services: services.map { .init(service: $0, successTerminationBehavior: .ignore) }
                    + [.init(service: progress, successTerminationBehavior: .ignore)]
                    + [endpoint?.inGroup].compactMap { $0 },
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await traces.exporting(process: client.process, global: global) { try await group.run() }
        client.close()
    }
}
