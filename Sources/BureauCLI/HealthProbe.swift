import ArgumentParser
import BureauSchemas
import Bus
import Foundation
import Guards
import Supervisor
import Synchronization
import ZeroMQBus

/// Gathers what `bureau status` and `bureau top` show: the bus's `stats` (its figures, and
/// every consumer's lag as the bus sees it), the processes from the supervisor of the data
/// directory or, without one (a bus on another machine), from the log's process events, and
/// each process's last error from the log.
final class HealthProbe: Sendable {
    let client: ZeroMQBusClient
    let location: BusLocation
    /// Ask the supervisor of the data directory (false for a bus given with --bus).
    let local: Bool
    /// How long the supervisor has to answer.
    let supervisorTimeout: Duration
    private let system = Mutex(SystemEvents())

    init(client: ZeroMQBusClient, location: BusLocation, local: Bool, supervisorTimeout: Duration = .seconds(3)) {
        self.client = client
        self.location = location
        self.local = local
        self.supervisorTimeout = supervisorTimeout
    }

    /// What the log's `bureau.system.` events say: each process's last start and exit, and the
    /// last error each process raised.
    struct SystemEvents {
        var processes: [String: DeploymentHealth.Process] = [:]
        var order: [String] = []
        var lastErrors: [String: String] = [:]
        /// The last position read; following again goes on from there.
        var position: UInt64 = 0
        /// Whether they were read up to the head once: until then, processes and their errors
        /// may be missing.
        var complete = false
        /// Why following them failed last, until a later follow reads again: the processes and
        /// their errors are as they were then.
        var followProblem: String?

        /// Folds `event`; one of these types that cannot be read becomes its producer's last
        /// error, where `status` and `top` show it, rather than being passed over.
        mutating func apply(_ event: StoredEvent) {
            position = max(position, event.position)
            do {
                try fold(event)
            } catch {
                lastErrors[event.producerProcess] = "unreadable \(event.type) at position \(event.position): \(error)"
            }
        }

        private mutating func fold(_ event: StoredEvent) throws {
            if let started = try event.payload(as: Bureau_System_ProcessStarted.self) {
                if processes[started.process] == nil { order.append(started.process) }
                processes[started.process] = DeploymentHealth.Process(
                    name: started.process, pid: started.pid, state: "running", up: true,
                    restarts: Int(started.restarts), uptimeSeconds: nil, lastExit: nil, lastError: nil,
                    expectedConsumers: HealthProbe.consumers(runBy: started.arguments))
            } else if let exited = try event.payload(as: Bureau_System_ProcessExited.self) {
                guard var process = processes[exited.process] else { return }
                process.state = "stopped"
                process.up = false
                process.lastExit = ExitStatus(exitCode: exited.exitCode, signal: exited.signal).description
                processes[exited.process] = process
            } else if let raised = try event.payload(as: Bureau_System_ErrorRaised.self) {
                let process = raised.process.isEmpty ? event.producerProcess : raised.process
                lastErrors[process] = "\(raised.code): \(raised.message)"
            }
        }
    }

    /// The consumers a process started with `arguments` (`bureau ARGUMENTS`) runs and reports
    /// to the bus: the modules of `run` whose hosts report their progress, and `tui`'s own (not
    /// `tui --replay`'s). Empty for another command of this build (they consume nothing); nil
    /// for a `run` that names no module this build knows, or a command it does not know
    /// (another version's): their consumers are unknown.
    ///
    /// Read from the words, not parsed: parsing validates the options too, in this process's
    /// environment rather than the child's (a store or a bus given in the child's environment,
    /// a key file only its user can read), and would call a healthy process unknown.
    static func consumers(runBy arguments: [String]) -> [String]? {
        guard let name = arguments.first else { return nil }
        switch name {
        case RunCommand._commandName:
            // No option's value is a module's name, so the modules are the words that are.
            let registry = Composition.registry()
            let modules = arguments.dropFirst().compactMap { registry.module(named: $0) }
            guard !modules.isEmpty else { return nil }
            return modules.filter(\.reportsProgress).map(\.name)
        case TuiCommand._commandName:
            return arguments.contains("--replay") ? [] : ["tui"]
        default:
            return commandNames.contains(name) ? [] : nil
        }
    }

    /// Every command of this build.
    private static let commandNames = Set(Bureau.configuration.subcommands.map { $0._commandName })

    /// Follows the log's system events from where it last read (the start, at first), folding
    /// them; returns when the subscription ends (cancelled, or the bus gone for good), or,
    /// `untilCaughtUp`, once it has read up to the head (true).
    @discardableResult
    func followSystemEvents(untilCaughtUp: Bool = false) async -> Bool {
        let subscription = client.subscribe(
            EventFilter(prefixes: ["bureau.system."]), after: system.withLock { $0.position })
        defer { subscription.cancel() }
        do {
            for try await item in subscription {
                switch item {
                case .event(let event):
                    system.withLock {
                        $0.apply(event)
                        $0.followProblem = nil
                    }
                case .caughtUp:
                    system.withLock {
                        $0.complete = true
                        $0.followProblem = nil
                    }
                    if untilCaughtUp { return true }
                case .connection: continue
                }
            }
        } catch {
            // Cancelled (a timeout, `top` quitting) is no failure: an incomplete list says so.
            if !(error is CancellationError) && !Task.isCancelled {
                system.withLock { $0.followProblem = "\(error)" }
            }
            return false
        }
        return false
    }

    /// Reads the system events up to the head, taking at most `timeout`; true if it got there.
    func readSystemEvents(timeout: Duration) async -> Bool {
        await Timeout.result(within: timeout) { await self.followSystemEvents(untilCaughtUp: true) } ?? false
    }

    /// The deployment now.
    func health(maxLagSeconds: Double, timeout: Duration = .seconds(2)) async -> DeploymentHealth {
        var stats: Bureau_Bus_BusStats?
        var busProblem: String?
        do {
            stats = try await client.statistics(timeout: timeout)
        } catch {
            busProblem = "the bus does not answer: \(error)"
        }
        let system = self.system.withLock { $0 }
        var processes: [DeploymentHealth.Process] = []
        // Each bus process name's pid, from the consumers' reports: a supervisor names a
        // process after its deployment entry, the bus after what it runs.
        var busNames: [Int32: String] = [:]
        for consumer in stats?.consumers ?? [] { busNames[Int32(bitPattern: consumer.pid)] = consumer.process }
        func lastError(_ name: String, pid: Int32) -> String? {
            system.lastErrors[name] ?? busNames[pid].flatMap { system.lastErrors[$0] }
        }
        // No supervisor to answer (none runs here, or it is stopping): the log's process events
        // tell the processes instead. One whose socket is there but does not answer is trouble:
        // `bureau ps` and `down` cannot reach it either.
        var rows: [Supervisor.Row]?
        var supervisorProblem: String?
        if local {
            do {
                // A wait on a socket: on a thread of its own, not the cooperative pool's.
                rows = try await OwnThread.run(name: "bureau-control") { [location, supervisorTimeout] in
                    try ControlClient.processes(location: location, timeout: supervisorTimeout)
                }
            } catch {
                if ControlClient.socketExists(location: location) {
                    supervisorProblem = "the supervisor does not answer (\(error)); processes as the log tells them"
                }
            }
        }
        if let rows {
            processes = rows.map { row in
                var process = DeploymentHealth.Process(row, lastError: lastError(row.name, pid: row.pid))
                if let known = system.processes[row.name] { process.expectedConsumers = known.expectedConsumers }
                return process
            }
        } else {
            processes = system.order.compactMap { name in
                guard var process = system.processes[name] else { return nil }
                process.lastError = lastError(name, pid: process.pid)
                return process
            }
        }
        // Without them the processes (remote), their errors and what each consumes may be missing.
        let incomplete =
            system.complete
            ? nil
            : "the process list is incomplete: the log's system events (each process's start, exit and "
                + "errors) could not be read up to the head"
        // Following them failed: what they said since (starts, exits, errors) is missing.
        let stale = system.followProblem.map {
            "the process list may be stale: following the log's system events failed (\($0))"
        }
        let processesProblem = [supervisorProblem, incomplete, stale].compactMap { $0 }
        return DeploymentHealth(
            stats: stats, busProblem: busProblem, processes: processes,
            processesProblem: processesProblem.isEmpty ? nil : processesProblem.joined(separator: "; "),
            maxLagSeconds: maxLagSeconds)
    }
}
