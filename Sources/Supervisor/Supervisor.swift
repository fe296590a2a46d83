import BureauSchemas
import Bus
import EventLog
import Foundation
import Guards
import Logging
import ServiceLifecycle
import Synchronization
import ZeroMQBus

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a deployment: starts its processes in dependency order, waits for each to be ready,
/// restarts what fails with exponential backoff up to a limit, and stops everything in reverse
/// order (SIGTERM, a timeout, SIGKILL) on a graceful shutdown, on `bureau down`, or when the
/// front-end quits.
///
/// What to do and when is decided by ``DeploymentLifecycle``, a value; this class performs its
/// actions (spawning, signals, timers, publishing, the log) and feeds back what came of them
/// (pids, exits, READY lines, timers firing), one input at a time, in the order they came.
///
/// Children hold the read end of a lifeline pipe: if the supervisor dies, even by SIGKILL,
/// they see end-of-file and stop. Every start and exit is published on the bus as
/// `ProcessStarted` / `ProcessExited`, so the log shows every crash; a process left
/// crash-looping is an `ErrorRaised` (code `crash-looping`) too.
public final class Supervisor: Service, Sendable {
    /// What the run loop waits for.
    enum Outcome: Sendable {
        case ready(Duration)
        case failed(SupervisorError)
        case stopRequested
        case stopped
    }

    /// The lifecycle and the inputs waiting for it. Whoever feeds an input while nobody is
    /// handling inputs handles them all, so that inputs are handled and their actions performed
    /// in order, and an action may feed inputs without waiting for itself.
    struct Core {
        var lifecycle: DeploymentLifecycle
        var inbox: [DeploymentLifecycle.Input] = []
        var handling = false
    }

    let configuration: Configuration
    let logger: Logger
    let output: ProcessOutput
    let events: SupervisorEvents
    private let core: Mutex<Core>
    private let timers = Mutex<[LifecycleTimer: Task<Void, Never>]>([:])
    private let outcomes: AsyncStream<Outcome>
    private let outcome: AsyncStream<Outcome>.Continuation
    private let lifeline: (read: Int32, write: Int32)
    /// The deployment's bus on another machine, its keys read; nil when it runs its own.
    let remote: ZeroMQBus.RemoteBus?
    let remoteStatus = Mutex(RemoteBusStatus())
    let remoteWatch = Mutex<Task<Void, Never>?>(nil)
    /// Set when the deployment is asked to stop, for waits that are not the lifecycle's.
    let stopping = Atomic<Bool>(false)

    public init(configuration: Configuration, logger: Logger) throws(SupervisorError) {
        self.configuration = configuration
        self.logger = logger
        do {
            lifeline = try ProcessSpawn.pipe()
        } catch {
            throw SupervisorError(error.description)
        }
        // Owner-only (0700), like the files in it. Without it the deployment still runs; each
        // log file then says it cannot be opened.
        do {
            try OwnerOnly.makeDirectory(configuration.location.processLogDirectory)
        } catch {
            logger.error(
                "the process log directory could not be made: processes' output is not kept",
                metadata: [
                    "supervisor.directory": "\(configuration.location.processLogDirectory)",
                    "supervisor.error": "\(error)",
                ])
        }
        let output = ProcessOutput(
            directory: configuration.location.processLogDirectory,
            names: configuration.deployment.processes.map(\.name), maxBytes: configuration.deployment.logMaxBytes,
            console: configuration.console, logger: logger)
        self.output = output
        let remote = try configuration.deployment.remoteBus.map { settings throws(SupervisorError) in
            try Self.resolve(settings)
        }
        self.remote = remote
        let location = configuration.location
        events = SupervisorEvents(logger: logger) { options in
            if let remote { return try ZeroMQBusClient(remote: remote, options: options, logger: logger) }
            return try ZeroMQBusClient(location: location, options: options, logger: logger)
        }
        core = Mutex(Core(lifecycle: DeploymentLifecycle(deployment: configuration.deployment) { output.path(of: $0) }))
        (outcomes, outcome) = AsyncStream.makeStream(of: Outcome.self)
    }

    deinit {
        close(lifeline.read)
        close(lifeline.write)
    }

    /// The processes, in start order.
    public var rows: [Row] {
        let now = ContinuousClock.now
        let processes = core.withLock { core in core.lifecycle.inStartOrder.map { Row($0, now: now) } }
        guard let remote else { return processes }
        return [remoteBusRow(remote, now: now)] + processes
    }

    /// The file each process's output goes to.
    public func logPath(of name: String) -> String { output.path(of: name) }

    public func run() async throws {
        let control = openControlServer()
        defer { control?.stop() }
        var failure: SupervisorError?
        var started = false
        var outcomes = self.outcomes.makeAsyncIterator()
        await withGracefulShutdownHandler {
            if let remote {
                if let error = await waitForRemoteBus(
                    remote, timeout: configuration.deployment.remoteBus?.waitTimeout ?? .seconds(60))
                {
                    // Asked to stop while waiting: nothing started, nothing failed.
                    if !stopping.load(ordering: .relaxed) { failure = error }
                    return
                }
                events.connect()
            }
            started = true
            feed(.start)
            running: while let next = await outcomes.next() {
                switch next {
                case .ready(let took):
                    configuration.onReady(took)
                    guard let frontEnd = configuration.frontEnd else { continue }
                    failure = await runFrontEnd(frontEnd)
                    break running
                case .failed(let error):
                    failure = error
                    break running
                case .stopRequested, .stopped:
                    break running
                }
            }
        } onGracefulShutdown: {
            self.requestStop()
        }
        if started { feed(.stop) }
        stopping: while started, let next = await outcomes.next() {
            switch next {
            case .failed(let error):
                // Stopped while starting.
                failure = failure ?? error
            case .stopped:
                break stopping
            case .ready, .stopRequested:
                continue
            }
        }
        for timer in timers.withLock({ $0.values }) { timer.cancel() }
        remoteWatch.withLock { $0 }?.cancel()
        await events.finish()
        if let failure { throw failure }
    }

    /// What became of a signal asked for by name (``signal(_:_:)``).
    public enum SignalOutcome: Sendable, Equatable {
        /// Sent to the child of this id.
        case sent(pid: Int32)
        /// `kill` refused it (EPERM: a child that changed its user).
        case refused(pid: Int32, errno: Int32)
        /// No child of it runs now: it is in `state`.
        case notRunning(state: State)
        /// The deployment has no process of that name; these are its processes.
        case unknownProcess(known: [String])
    }

    /// Sends `signal` to the child of the process `name` that runs now (as `bureau kill` does).
    ///
    /// Sent while the lifecycle's lock is held, and only to the child the lifecycle still counts
    /// as running: a child is reaped only after the lifecycle has heard of its end (``feed``), so
    /// the id cannot have become another process's. What follows is the restart policy's, as
    /// for any other end.
    public func signal(_ name: String, _ signal: Int32) -> SignalOutcome {
        core.withLock { core in
            guard let process = core.lifecycle.processes[name] else {
                return .unknownProcess(known: core.lifecycle.inStartOrder.map(\.name))
            }
            guard let pid = process.pid else { return .notRunning(state: State(process.phase)) }
            // A child that has ended but is not yet reaped takes the signal without error.
            return kill(pid, signal) == 0 ? .sent(pid: pid) : .refused(pid: pid, errno: errno)
        }
    }

    /// Asks the supervisor to stop the deployment (as `bureau down` does).
    public func requestStop() {
        stopping.store(true, ordering: .relaxed)
        outcome.yield(.stopRequested)
    }

    // MARK: Inputs

    /// Hands `input` to the lifecycle and performs the actions it returns.
    func feed(_ input: DeploymentLifecycle.Input) {
        let handler = core.withLock { core in
            core.inbox.append(input)
            defer { core.handling = true }
            return !core.handling
        }
        guard handler else { return }
        while true {
            let handled = core.withLock { core -> (actions: [SupervisorAction], ended: pid_t?)? in
                guard !core.inbox.isEmpty else {
                    core.handling = false
                    return nil
                }
                let input = core.inbox.removeFirst()
                let actions = core.lifecycle.handle(input, at: .now)
                guard case .exited(_, let pid, _) = input else { return (actions, nil) }
                return (actions, pid)
            }
            guard let handled else { return }
            // A child that ended stays unreaped until here: every action computed before the
            // lifecycle heard of its end has been performed, and none after it signals it, so
            // no signal can reach another process the system gives its id to.
            if let ended = handled.ended { ExitStatus.reap(ended) }
            for action in handled.actions { perform(action) }
        }
    }

    // MARK: Actions

    private func perform(_ action: SupervisorAction) {
        switch action {
        case .spawn(let name, let arguments):
            spawn(name, arguments: arguments)
        case .signal(let pid, let signal):
            // A child that has ended stays a zombie until the lifecycle has heard so (`feed`
            // reaps it then), and a zombie takes a signal without error: ESRCH means a pid that
            // is no longer ours, anything else is said.
            if kill(pid, signal) != 0, case let code = errno, code != ESRCH {
                logger.warning(
                    "could not signal a process",
                    metadata: [
                        "process.pid": "\(pid)", "process.signal": "\(ExitStatus.name(ofSignal: signal))",
                        "error.errno": "\(code)",
                    ])
            }
        case .scheduleTimer(let delay, let timer):
            timers.withLock { timers in
                timers[timer]?.cancel()
                timers[timer] = Task {
                    try? await Task.sleep(for: delay)
                    guard !Task.isCancelled else { return }
                    _ = self.timers.withLock { $0.removeValue(forKey: timer) }
                    self.feed(.timerFired(timer))
                }
            }
        case .cancelTimer(let timer):
            timers.withLock { $0.removeValue(forKey: timer) }?.cancel()
        case .publish(.started(let started)):
            events.publish(started)
        case .publish(.exited(let exited)):
            events.publish(exited)
        case .say(let line, let process):
            say(line, process: process)
        case .reportCrashLoop(let name, let failures):
            logger.error(
                "a process keeps failing and is no longer restarted",
                metadata: ["process.name": "\(name)", "process.failures": "\(failures)"])
            events.publish(SupervisorEvents.crashLooping(process: name, failures: failures, log: output.path(of: name)))
        case .connectEvents:
            events.connect()
        case .drainEvents:
            Task {
                await events.drain()
                feed(.eventsDrained)
            }
        case .deploymentReady(let took):
            outcome.yield(.ready(took))
        case .deploymentFailed(let error):
            say("error: \(error)", process: nil)
            outcome.yield(.failed(error))
        case .deploymentStopped:
            outcome.yield(.stopped)
        }
    }

    /// Launches a child and watches it: its output, its READY line, its exit.
    private func spawn(_ name: String, arguments: [String]) {
        let index = configuration.deployment.processes.firstIndex { $0.name == name } ?? 0
        let readiness = configuration.deployment.processes.first { $0.name == name }?.reportsReadiness ?? false
        let launched: LaunchedProcess
        do {
            launched = try ProcessLauncher.launch(
                executable: configuration.executable, arguments: arguments,
                environment: childEnvironment.merging(["NO_COLOR": "1"]) { _, new in new },
                readiness: readiness, lifeline: lifeline.read)
        } catch {
            feed(.launchFailed(process: name, reason: error.description))
            return
        }
        let pid = launched.pid
        // Queued before anything the watchers below report about this child.
        feed(.launched(process: name, pid: pid))
        let drained = launched.output.map { output.follow($0, name: name, index: index) }
        if let fd = launched.readiness {
            Thread.detachNewThread {
                guard let line = Self.firstLine(fd) else { return }
                let detail = line.hasPrefix("READY ") ? String(line.dropFirst(6)) : ""
                self.feed(.reportedReady(process: name, pid: pid, detail: detail))
            }
        }
        Thread.detachNewThread {
            // Left unreaped: `feed` reaps it once the lifecycle has heard of its end.
            let status = ExitStatus.waitForEnd(ofChild: pid) ?? self.unwaitable(name, pid: pid)
            // What the child wrote before it exited is in its log before anyone acts on the exit
            // (a failure report quotes it). Bounded: a grandchild could hold the pipe open.
            _ = drained?.wait(timeout: .now() + .seconds(2))
            self.feed(.exited(process: name, pid: pid, status: status))
        }
    }

    /// How a child that cannot be waited for is said to have ended (ECHILD: something else in
    /// this process reaped it, which nothing should): an error in the log, and an unknown status.
    private func unwaitable(_ name: String, pid: pid_t) -> ExitStatus {
        let code = errno
        logger.error(
            "cannot wait for a child process: its end and exit status are unknown",
            metadata: ["process.name": "\(name)", "process.pid": "\(pid)", "error.errno": "\(code)"])
        return .unknown
    }

    /// What every child is given: the data directory, the store the bus keeps its log in, and,
    /// for a bus on another machine, its address and keys.
    private var childEnvironment: [String: String] {
        var environment = ["BUREAU_DATA": configuration.location.dataDirectory]
        environment["BUREAU_STORE"] = configuration.deployment.store
        return environment.merging(configuration.deployment.remoteBus?.environment ?? [:]) { _, remote in remote }
    }

    // MARK: The front-end

    /// Runs the front-end on this terminal; returns when it quits: nil when it quit as asked
    /// (exit code 0), else what stops the deployment with a failure.
    private func runFrontEnd(_ arguments: [String]) async -> SupervisorError? {
        let launched: LaunchedProcess
        do {
            launched = try ProcessLauncher.launch(
                executable: configuration.executable, arguments: arguments,
                environment: childEnvironment, readiness: false,
                lifeline: lifeline.read, foreground: true)
        } catch {
            let failure = SupervisorError("could not start the front-end: \(error)")
            say("\(failure)", process: nil)
            return failure
        }
        let pid = launched.pid
        let status = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: ExitStatus.waitFor(child: pid) ?? self.unwaitable("front-end", pid: pid))
            }
        }
        if status.succeeded || Self.quitSignals.contains(status.signal)
            || Self.quitSignals.contains(status.exitCode - 128)
        {
            say("the front-end \(status.text); stopping", process: nil)
            return nil
        }
        let failure = SupervisorError("the front-end (bureau \(arguments.joined(separator: " "))) \(status.text)")
        say("\(failure); stopping", process: nil)
        return failure
    }

    /// The signals that mean a person quit (Ctrl-C, a closed terminal…): the front-end ends by
    /// one, or exits with 128 + it once it has restored the terminal.
    private static let quitSignals: Set<Int32> = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    // MARK: Helpers

    /// A line from the supervisor: to its log file, and the terminal when streaming output.
    func say(_ message: String, process: String?) {
        logger.debug("\(message)", metadata: process.map { ["process.name": "\($0)"] })
        output.line("supervisor", message)
    }

    /// The first line written to `fd` (at most 4096 bytes), nil at end-of-file before any; closes `fd`.
    static func firstLine(_ fd: Int32) -> String? {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count < 4096 {
            let count = read(fd, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1, byte != UInt8(ascii: "\n") else { break }
            line.append(byte)
        }
        close(fd)
        return line.isEmpty ? nil : String(decoding: line, as: UTF8.self)
    }
}

extension Supervisor {
    /// The control socket behind `bureau ps`, `logs` and `down`, or nil, said at error level in
    /// the log and as an `ErrorRaised` on the bus (`show errors`), when it cannot be opened: the
    /// deployment runs on, but those commands cannot reach it.
    func openControlServer() -> ControlServer? {
        do {
            return try ControlServer(location: configuration.location, supervisor: self, logger: logger)
        } catch {
            let pid = ProcessInfo.processInfo.processIdentifier
            logger.error(
                "no control socket: bureau ps, logs and down cannot reach this deployment",
                metadata: ["supervisor.error": "\(error)", "supervisor.pid": "\(pid)"])
            events.publish(SupervisorEvents.controlUnavailable(error, pid: pid))
            return nil
        }
    }
}
