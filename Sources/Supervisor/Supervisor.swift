import BureauSchemas
import Bus
import EventLog
import Foundation
import Guards
import Logging
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Why a deployment could not start or had to stop.
public struct SupervisorError: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Runs a deployment: starts its processes in dependency order, waits for each to be ready,
/// restarts what fails with exponential backoff up to a limit, and stops everything in reverse
/// order (SIGTERM, a timeout, SIGKILL) on a graceful shutdown, on `bureau down`, or when the
/// front-end quits.
///
/// Children hold the read end of a lifeline pipe: if the supervisor dies, even by SIGKILL,
/// they see end-of-file and stop. Every start and exit is published on the bus as
/// `ProcessStarted` / `ProcessExited`, so the log shows every crash.
public final class Supervisor: Service, Sendable {
    public struct Configuration: Sendable {
        public var deployment: Deployment
        public var location: BusLocation
        /// The `bureau` executable children run.
        public var executable: String
        /// Echo the processes' output to the terminal with name prefixes.
        public var console: Bool
        /// Arguments of a front-end run in the foreground once everything is ready; stopping
        /// it stops the deployment.
        public var frontEnd: [String]?
        /// Called once every process is ready, with the time it took.
        public var onReady: @Sendable (Duration) -> Void = { _ in }

        public init(deployment: Deployment, location: BusLocation, executable: String, console: Bool) {
            self.deployment = deployment
            self.location = location
            self.executable = executable
            self.console = console
        }
    }

    /// Where a process is in its life.
    public enum State: String, Sendable, Codable {
        case pending, starting, ready, restarting, stopping, stopped, exited
        case crashLooping = "crash-looping"
        case failed
    }

    /// One row of `bureau ps`.
    public struct Row: Sendable, Codable, Equatable {
        public var name: String
        public var pid: Int32
        public var state: State
        public var restarts: Int
        public var uptimeSeconds: Double?
        public var log: String
    }

    struct Entry {
        var spec: ProcessSpec
        var index: Int
        var pid: pid_t = 0
        var state: State = .pending
        var restarts = 0
        /// Failures since the process last ran for `restart.resetAfter`: what the limit counts.
        var failuresInARow = 0
        var startedAt: ContinuousClock.Instant?
        var readyDetail: String?
        /// Stopped on purpose to start again with new arguments (a dependency moved).
        var replanned = false
    }

    struct Shared {
        var entries: [String: Entry] = [:]
        var stopping = false
        var exitWaiters: [pid_t: [CheckedContinuation<Int32, Never>]] = [:]
        var exitStatuses: [pid_t: Int32] = [:]
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
        var stopRequested = false
        /// Waiting for a process to settle: ready, or given up on.
        var settleWaiters: [String: [CheckedContinuation<State, Never>]] = [:]

        /// Sets a process's state, returning the waiters it settles.
        mutating func set(_ name: String, _ state: State) -> [CheckedContinuation<State, Never>] {
            entries[name]?.state = state
            guard Supervisor.settled.contains(state) else { return [] }
            return settleWaiters.removeValue(forKey: name) ?? []
        }
    }

    static let settled: Set<State> = [.ready, .crashLooping, .exited, .stopped, .failed]

    /// Waits until `name` is ready or will not be.
    func waitUntilSettled(_ name: String) async -> State {
        await withCheckedContinuation { continuation in
            let now = shared.withLock { shared -> State? in
                if let state = shared.entries[name]?.state, Self.settled.contains(state) { return state }
                shared.settleWaiters[name, default: []].append(continuation)
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }

    let configuration: Configuration
    let logger: Logger
    let output: ProcessOutput
    let events: SupervisorEvents
    private let shared = Mutex(Shared())
    private let lifeline: (read: Int32, write: Int32)

    public init(configuration: Configuration, logger: Logger) throws(SupervisorError) {
        self.configuration = configuration
        self.logger = logger
        do {
            lifeline = try ProcessLauncher.pipePair()
        } catch {
            throw SupervisorError(error.description)
        }
        // Owner-only (0700), like the files in it.
        try? OwnerOnly.makeDirectory(configuration.location.processLogDirectory)
        output = ProcessOutput(
            directory: configuration.location.processLogDirectory,
            names: configuration.deployment.processes.map(\.name), maxBytes: configuration.deployment.logMaxBytes,
            console: configuration.console)
        events = SupervisorEvents(location: configuration.location, logger: logger)
        shared.withLock { shared in
            for (index, spec) in configuration.deployment.processes.enumerated() {
                shared.entries[spec.name] = Entry(spec: spec, index: index)
            }
        }
    }

    deinit {
        close(lifeline.read)
        close(lifeline.write)
    }

    /// The processes, in start order.
    public var rows: [Row] {
        let now = ContinuousClock.now
        return shared.withLock { shared in
            configuration.deployment.startOrder.compactMap { spec in
                guard let entry = shared.entries[spec.name] else { return nil }
                let uptime = entry.startedAt.map { (now - $0) }.map {
                    Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18
                }
                return Row(
                    name: spec.name, pid: entry.pid, state: entry.state, restarts: entry.restarts,
                    uptimeSeconds: entry.pid > 0 && [.starting, .ready].contains(entry.state) ? uptime : nil,
                    log: output.path(of: spec.name))
            }
        }
    }

    /// The file each process's output goes to.
    public func logPath(of name: String) -> String { output.path(of: name) }

    public func run() async throws {
        let began = ContinuousClock.now
        let control = try? ControlServer(location: configuration.location, supervisor: self, logger: logger)
        defer { control?.stop() }
        var failure: SupervisorError?
        await withGracefulShutdownHandler {
            do throws(SupervisorError) {
                try await startAll()
                let took = ContinuousClock.now - began
                say("all \(configuration.deployment.processes.count) processes ready in \(Self.milliseconds(took)) ms")
                configuration.onReady(took)
                if let frontEnd = configuration.frontEnd {
                    await runFrontEnd(frontEnd)
                } else {
                    await waitForStopRequest()
                }
            } catch {
                say("error: \(error)")
                failure = error
            }
        } onGracefulShutdown: {
            self.requestStop()
        }
        await stopAll()
        await events.finish()
        if let failure { throw failure }
    }

    /// Asks the supervisor to stop the deployment (as `bureau down` does).
    public func requestStop() {
        let waiters = shared.withLock { shared in
            shared.stopRequested = true
            defer { shared.stopWaiters = [] }
            return shared.stopWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private func waitForStopRequest() async {
        await withCheckedContinuation { continuation in
            let now = shared.withLock { shared in
                if shared.stopRequested { return true }
                shared.stopWaiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    // MARK: Starting

    /// Starts the processes wave by wave: each wave is every process whose dependencies are ready.
    func startAll() async throws(SupervisorError) {
        var ready = Set<String>()
        var remaining = configuration.deployment.startOrder
        while !remaining.isEmpty {
            let wave = remaining.filter { $0.dependsOn.allSatisfy(ready.contains) }
            guard !wave.isEmpty else { throw SupervisorError("a dependency cycle among \(remaining.map(\.name))") }
            let failures = await withTaskGroup(of: SupervisorError?.self) { group in
                for spec in wave {
                    group.addTask {
                        do throws(SupervisorError) {
                            try await self.start(spec.name, restart: false)
                            return nil
                        } catch {
                            return error
                        }
                    }
                }
                var failures: [SupervisorError] = []
                for await failure in group { if let failure { failures.append(failure) } }
                return failures
            }
            if let first = failures.first { throw first }
            if shared.withLock({ $0.stopRequested }) { throw SupervisorError("stopped while starting") }
            ready.formUnion(wave.map(\.name))
            remaining.removeAll { ready.contains($0.name) }
        }
    }

    /// Launches a process and waits until it is ready; on a timeout it is killed.
    func start(_ name: String, restart: Bool) async throws(SupervisorError) {
        guard
            let (spec, index, restarts, readyMap) = shared.withLock({
                shared -> (ProcessSpec, Int, Int, [String: String])? in
                guard let entry = shared.entries[name], !shared.stopping else { return nil }
                var ready: [String: String] = [:]
                for (key, value) in shared.entries { if let detail = value.readyDetail { ready[key] = detail } }
                return (entry.spec, entry.index, entry.restarts, ready)
            })
        else { return }
        let arguments = spec.arguments.map { Substitution.apply($0, ready: readyMap) }
        let launched: LaunchedProcess
        do {
            launched = try ProcessLauncher.launch(
                executable: configuration.executable, arguments: arguments,
                environment: ["BUREAU_DATA": configuration.location.dataDirectory, "NO_COLOR": "1"],
                readiness: spec.reportsReadiness, lifeline: lifeline.read)
        } catch {
            throw SupervisorError("\(name): \(error)")
        }
        let lateForStop = shared.withLock { shared in
            shared.entries[name]?.pid = launched.pid
            shared.entries[name]?.state = .starting
            shared.entries[name]?.startedAt = .now
            shared.entries[name]?.replanned = false
            return shared.stopping
        }
        // Launched as the deployment began stopping: stop it as well.
        if lateForStop { kill(launched.pid, SIGTERM) }
        if let fd = launched.output { output.follow(fd, name: name, index: index) }
        watchExit(name: name, pid: launched.pid)
        say(
            "\(restart ? "restarted" : "started") \(name) (pid \(launched.pid)): bureau \(arguments.joined(separator: " "))"
        )
        var started = Bureau_System_ProcessStarted()
        started.process = name
        started.pid = launched.pid
        started.arguments = arguments
        started.restarts = UInt32(restarts)
        events.publish(started)

        var detail = ""
        if let readyFD = launched.readiness {
            switch await Self.readLine(readyFD, timeout: spec.readyTimeout) {
            case .line(let text):
                detail = text.hasPrefix("READY ") ? String(text.dropFirst(6)) : ""
            case .closed:
                // It exited; its exit handler restarts it (or gives up). A first start waits for that.
                guard !restart else { return }
                switch await waitUntilSettled(name) {
                case .ready: return
                case .crashLooping:
                    throw SupervisorError("\(name) kept failing before it was ready; see \(output.path(of: name))")
                default:
                    throw SupervisorError("\(name) exited before it was ready; see \(output.path(of: name))")
                }
            case .timedOut:
                kill(launched.pid, SIGKILL)
                throw SupervisorError(
                    "\(name) was not ready within \(Self.milliseconds(spec.readyTimeout) / 1000) s "
                        + "(ready_timeout_s); see \(output.path(of: name))")
            }
        }
        let (moved, settledWaiters) = shared.withLock { shared -> ([String], [CheckedContinuation<State, Never>]) in
            let previous = shared.entries[name]?.readyDetail
            shared.entries[name]?.readyDetail = detail
            guard shared.entries[name]?.pid == launched.pid, shared.entries[name]?.state == .starting else {
                return ([], [])
            }
            let waiters = shared.set(name, .ready)
            guard restart, let previous, previous != detail else { return ([], waiters) }
            // Dependents were started with the old detail (a port): start them again.
            var moved: [String] = []
            for (other, entry) in shared.entries
            where entry.spec.arguments.contains(where: { Substitution.references(in: $0).contains(name) })
                && entry.pid > 0
                && [.starting, .ready].contains(entry.state)
            {
                shared.entries[other]?.replanned = true
                moved.append(other)
            }
            return (moved, waiters)
        }
        for waiter in settledWaiters { waiter.resume(returning: .ready) }
        if isBus(name) { events.connect() }
        say("\(name) is ready\(detail.isEmpty ? "" : " at \(detail)")")
        for other in moved {
            say("restarting \(other): \(name) now reports \(detail)")
            if let pid = shared.withLock({ $0.entries[other]?.pid }) { kill(pid, SIGTERM) }
        }
    }

    // MARK: Exits and restarts

    /// Waits for the child on a thread of its own and handles its exit.
    private func watchExit(name: String, pid: pid_t) {
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            self.exited(name: name, pid: pid, status: status)
        }
    }

    private func exited(name: String, pid: pid_t, status: Int32) {
        enum Next {
            case nothing
            case restart(after: Duration, count: Int)
            case giveUp(count: Int)
            case completed
        }
        let signal = Self.terminationSignal(status)
        let code = Self.exitCode(status)
        let (next, waiters, policy, settledWaiters) = shared.withLock {
            shared -> (Next, [CheckedContinuation<Int32, Never>], RestartPolicy?, [CheckedContinuation<State, Never>])
            in
            let waiters = shared.exitWaiters.removeValue(forKey: pid) ?? []
            shared.exitStatuses[pid] = status
            guard let entry = shared.entries[name], entry.pid == pid else { return (.nothing, waiters, nil, []) }
            shared.entries[name]?.startedAt = nil
            if shared.stopping {
                return (.nothing, waiters, nil, shared.set(name, .stopped))
            }
            if entry.replanned {
                _ = shared.set(name, .restarting)
                return (.restart(after: .zero, count: entry.restarts), waiters, entry.spec.restart, [])
            }
            if signal == 0 && code == 0 {
                return (.completed, waiters, nil, shared.set(name, .exited))
            }
            let ranLong = entry.startedAt.map { .now - $0 >= entry.spec.restart.resetAfter } ?? false
            let failures = ranLong ? 1 : entry.failuresInARow + 1
            shared.entries[name]?.failuresInARow = failures
            shared.entries[name]?.restarts = entry.restarts + 1
            guard failures <= entry.spec.restart.maximumRestarts else {
                return (.giveUp(count: failures), waiters, entry.spec.restart, shared.set(name, .crashLooping))
            }
            _ = shared.set(name, .restarting)
            let delay = entry.spec.restart.backoff(beforeRestart: failures)
            return (.restart(after: delay, count: failures), waiters, entry.spec.restart, [])
        }
        for waiter in settledWaiters {
            waiter.resume(returning: shared.withLock { $0.entries[name]?.state ?? .stopped })
        }
        for waiter in waiters { waiter.resume(returning: status) }
        let how = signal != 0 ? "was killed by signal \(signal)" : "exited with code \(code)"
        let message: String
        switch next {
        case .nothing:
            message = "stopped"
        case .completed:
            message = "completed; not restarted"
        case .restart(let delay, let count):
            message =
                delay == .zero
                ? "restarting now"
                : "restarting in \(Self.milliseconds(delay)) ms (restart \(count) of \(policy?.maximumRestarts ?? 0))"
        case .giveUp(let count):
            message =
                "crash-looping: failed \(count) times in a row; not restarting (max_restarts \(policy?.maximumRestarts ?? 0)); "
                + "see \(output.path(of: name))"
        }
        say("\(name) (pid \(pid)) \(how); \(message)")
        var exited = Bureau_System_ProcessExited()
        exited.process = name
        exited.pid = pid
        exited.exitCode = signal == 0 ? code : 0
        exited.signal = signal
        exited.restarts = UInt32(shared.withLock { $0.entries[name]?.restarts ?? 0 })
        exited.message = message
        events.publish(exited)
        if case .restart(let delay, _) = next {
            Task {
                try? await Task.sleep(for: delay)
                do throws(SupervisorError) {
                    try await self.start(name, restart: true)
                } catch {
                    self.say("\(error)")
                }
            }
        }
    }

    /// Waits for `pid` to exit; returns its wait status.
    func waitForExit(_ pid: pid_t) async -> Int32 {
        await withCheckedContinuation { continuation in
            let known = shared.withLock { shared -> Int32? in
                if let status = shared.exitStatuses[pid] { return status }
                shared.exitWaiters[pid, default: []].append(continuation)
                return nil
            }
            if let known { continuation.resume(returning: known) }
        }
    }

    // MARK: Stopping

    /// Stops every process, the last started first: SIGTERM, then SIGKILL after the stop timeout.
    func stopAll() async {
        let order = shared.withLock { shared -> [(String, pid_t)] in
            shared.stopping = true
            return configuration.deployment.startOrder.reversed().compactMap { spec in
                guard let entry = shared.entries[spec.name], entry.pid > 0,
                    ![.stopped, .exited, .crashLooping].contains(entry.state), shared.exitStatuses[entry.pid] == nil
                else { return nil }
                shared.entries[spec.name]?.state = .stopping
                return (spec.name, entry.pid)
            }
        }
        for (name, pid) in order {
            if isBus(name) { await events.drain(timeout: .seconds(3)) }
            kill(pid, SIGTERM)
            let timeout = configuration.deployment.stopTimeout
            let stopped = await Self.withTimeout(timeout) { await self.waitForExit(pid) }
            if stopped == nil {
                say("\(name) did not stop within \(Self.milliseconds(timeout)) ms of SIGTERM; sending SIGKILL")
                kill(pid, SIGKILL)
                _ = await waitForExit(pid)
            }
        }
        if !order.isEmpty { say("stopped \(order.count) processes") }
    }

    // MARK: The front-end

    /// Runs the front-end on this terminal; returns when it quits.
    private func runFrontEnd(_ arguments: [String]) async {
        let launched: LaunchedProcess
        do {
            launched = try ProcessLauncher.launch(
                executable: configuration.executable, arguments: arguments,
                environment: ["BUREAU_DATA": configuration.location.dataDirectory], readiness: false,
                lifeline: lifeline.read, foreground: true)
        } catch {
            say("could not start the front-end: \(error)")
            return
        }
        let pid = launched.pid
        let status = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                continuation.resume(returning: status)
            }
        }
        if Self.exitCode(status) != 0 || Self.terminationSignal(status) != 0 {
            say("the front-end ended with status \(status); stopping")
        }
    }

    // MARK: Helpers

    /// Whether `name` runs the bus daemon.
    func isBus(_ name: String) -> Bool {
        configuration.deployment.processes.first { $0.name == name }?.arguments.first == "bus"
    }

    /// A line from the supervisor: to its log file, and the terminal when streaming output.
    func say(_ message: String) {
        logger.debug("\(message)")
        output.line("supervisor", message)
    }

    enum ReadResult { case line(String), closed, timedOut }

    /// The first line written to `fd`, end-of-file, or a timeout; closes `fd`.
    static func readLine(_ fd: Int32, timeout: Duration) async -> ReadResult {
        let result = await withTimeout(timeout) {
            await withCheckedContinuation { (continuation: CheckedContinuation<ReadResult, Never>) in
                Thread.detachNewThread {
                    var line: [UInt8] = []
                    var byte: UInt8 = 0
                    while line.count < 4096 {
                        let count = read(fd, &byte, 1)
                        if count < 0 && errno == EINTR { continue }
                        guard count == 1, byte != UInt8(ascii: "\n") else { break }
                        line.append(byte)
                    }
                    close(fd)
                    continuation.resume(
                        returning: line.isEmpty ? .closed : .line(String(decoding: line, as: UTF8.self)))
                }
            }
        }
        return result ?? .timedOut
    }

    /// `body`'s result, or nil if `timeout` passes first (body keeps running, unobserved).
    static func withTimeout<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async -> T) async -> T? {
        let first = FirstOf<T?>()
        return await withCheckedContinuation { continuation in
            first.set(continuation)
            Task { first.resume(await body()) }
            Task {
                try? await Task.sleep(for: timeout)
                first.resume(nil)
            }
        }
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    static func exitCode(_ status: Int32) -> Int32 { (status >> 8) & 0xFF }
    static func terminationSignal(_ status: Int32) -> Int32 { status & 0x7F == 0 ? 0 : status & 0x7F }
}

/// Resumes a continuation with the first value given.
final class FirstOf<T: Sendable>: Sendable {
    private let state = Mutex<(continuation: CheckedContinuation<T, Never>?, value: T?, done: Bool)>((nil, nil, false))

    func set(_ continuation: CheckedContinuation<T, Never>) {
        let ready = state.withLock { state -> T? in
            guard !state.done, let value = state.value else {
                state.continuation = continuation
                return nil
            }
            state.done = true
            return value
        }
        if let ready { continuation.resume(returning: ready) }
    }

    func resume(_ value: T) {
        let continuation = state.withLock { state -> CheckedContinuation<T, Never>? in
            guard !state.done else { return nil }
            guard let continuation = state.continuation else {
                if state.value == nil { state.value = value }
                return nil
            }
            state.done = true
            return continuation
        }
        continuation?.resume(returning: value)
    }
}
