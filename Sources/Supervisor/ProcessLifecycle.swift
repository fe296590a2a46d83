import BureauSchemas
import Foundation
import Guards

#if canImport(Glibc)
    import Glibc
#endif

/// One process's life under the supervisor, as a value: each input (launched, ready, exited, a
/// timer) moves it on and returns the actions to perform. No clock, no I/O: the time of each
/// input is passed in.
///
/// The restart policy lives here: a process that fails (exits with a code other than 0, or is
/// killed) starts again after a backoff that doubles from `initial_backoff_ms` up to
/// `max_backoff_ms`; after `max_restarts` failures in a row it is left stopped as crash-looping.
/// A process that ran `reset_after_s` before it failed counts afresh. A process that exits with
/// code 0 has completed and is not restarted.
///
/// What concerns several processes — the start waves, re-planning what depends on a process
/// whose readiness moved, the order of a stop — is ``DeploymentLifecycle``'s; it calls these
/// transitions and passes in what only it knows (arguments with readiness substituted, the stop
/// timeout).
struct ProcessLifecycle: Sendable, Equatable {
    /// Where a process is in its life.
    enum Phase: Sendable, Equatable {
        /// Waiting for its dependencies (its start wave).
        case pending
        /// Asked to be spawned; its pid is not known yet.
        case launching
        /// Running, not ready yet.
        case starting
        case ready
        /// Sent SIGTERM to start again at once with new arguments (a dependency's readiness moved).
        case replanning
        /// Failed; waiting for its backoff to start again.
        case restarting
        /// The deployment is stopping: waiting for its turn, SIGTERM sent, or (`pid` nil) its
        /// launch under way.
        case stopping
        case stopped
        /// Completed: exited with code 0 while running; not restarted.
        case exited
        /// Failed `max_restarts` times in a row; not restarted.
        case crashLooping
        /// Could not be launched, or was not ready within `ready_timeout_s` when the deployment
        /// started (and was killed); not restarted.
        case failed
    }

    let spec: ProcessSpec
    /// The file its output goes to, named in messages that ask a person to look.
    let logPath: String
    private(set) var phase = Phase.pending
    /// The child that runs now; nil once its exit is seen.
    private(set) var pid: pid_t?
    /// The latest child's pid, kept after it exits (for `bureau ps`); 0 before the first.
    private(set) var lastPid: pid_t = 0
    /// Restarts after failures so far (not counting starts again with new arguments).
    private(set) var restarts = 0
    /// Failures since it last ran for `reset_after_s`: what `max_restarts` limits.
    private(set) var failuresInARow = 0
    private(set) var launches = 0
    /// When the current child started.
    private(set) var startedAt: ContinuousClock.Instant?
    /// The rest of the READY line it sent last (a server's URL), what `${name.ready}` becomes.
    private(set) var readyDetail: String?
    /// The arguments of the latest spawn, readiness substituted.
    private(set) var arguments: [String] = []
    /// The one timer running for it, if any.
    private(set) var timer: LifecycleTimer?
    /// Why it is ``Phase/failed``.
    private(set) var failure: String?
    /// How its latest child ended; nil before the first ended.
    private(set) var lastExit: ExitStatus?

    init(spec: ProcessSpec, logPath: String) {
        self.spec = spec
        self.logPath = logPath
    }

    var name: String { spec.name }
    /// Whether it runs the bus daemon, whose readiness lets the supervisor publish.
    var isBus: Bool { spec.arguments.first == "bus" }
    /// Whether a child of it runs or is being launched: what a stop must wait for.
    var isAlive: Bool { pid != nil || launchPending }
    /// A spawn was asked for and neither `launched` nor `launchFailed` has answered.
    private(set) var launchPending = false

    // MARK: Starting

    /// Asks for a child with `arguments`: from pending (its wave), restarting (its backoff
    /// passed) or replanning (the old child exited).
    mutating func launch(arguments: [String]) -> [SupervisorAction] {
        phase = .launching
        launchPending = true
        self.arguments = arguments
        return [.spawn(process: name, arguments: arguments)]
    }

    /// The child runs as `pid`. A process that does not report readiness is ready at once;
    /// one that does gets `ready_timeout_s` to say so.
    mutating func launched(pid: pid_t, at now: ContinuousClock.Instant) -> [SupervisorAction] {
        guard launchPending else { return [.signal(pid: pid, signal: SIGTERM)] }
        launchPending = false
        let again = launches > 0
        launches += 1
        self.pid = pid
        lastPid = pid
        startedAt = now
        var started = Bureau_System_ProcessStarted()
        started.process = name
        started.pid = pid
        started.arguments = arguments
        started.restarts = UInt32(clamping: restarts)
        var actions: [SupervisorAction] = [
            .say(
                "\(again ? "restarted" : "started") \(name) (pid \(pid)): bureau \(arguments.joined(separator: " "))",
                process: name),
            .publish(.started(started)),
        ]
        // Stopping while it was launched: it waits for its turn to be stopped.
        guard phase == .launching else { return actions }
        phase = .starting
        if spec.reportsReadiness {
            let readiness = LifecycleTimer.readiness(process: name, pid: pid)
            timer = readiness
            actions.append(.scheduleTimer(after: spec.readyTimeout, timer: readiness))
        } else {
            actions += becomeReady(detail: "")
        }
        return actions
    }

    /// The child could not be started at all.
    mutating func launchFailed(reason: String) -> [SupervisorAction] {
        guard launchPending else { return [] }
        launchPending = false
        phase = .failed
        let failure = "\(name): \(reason)"
        self.failure = failure
        return [.say(failure, process: name)]
    }

    /// The child `pid` wrote its READY line; `detail` is the rest of it.
    mutating func reportedReady(pid: pid_t, detail: String) -> [SupervisorAction] {
        guard pid == self.pid, phase == .starting else { return [] }
        var actions: [SupervisorAction] = []
        if let pending = timer {
            timer = nil
            actions.append(.cancelTimer(pending))
        }
        return actions + becomeReady(detail: detail)
    }

    private mutating func becomeReady(detail: String) -> [SupervisorAction] {
        phase = .ready
        readyDetail = detail
        var actions: [SupervisorAction] = [
            .say("\(name) is ready\(detail.isEmpty ? "" : " at \(detail)")", process: name)
        ]
        if isBus { actions.append(.connectEvents) }
        return actions
    }

    /// `ready_timeout_s` passed. At the first launch the deployment cannot start: the process
    /// is killed and failed. Later (a restart), it is killed and its exit counts as a failure.
    mutating func readinessOverdue(pid: pid_t) -> [SupervisorAction] {
        guard timer == .readiness(process: name, pid: pid), phase == .starting else { return [] }
        timer = nil
        let waited = "\(name) was not ready within \(spec.readyTimeout.secondsText()) s (ready_timeout_s)"
        if launches == 1 {
            phase = .failed
            failure = "\(waited); see \(logPath)"
            return [.signal(pid: pid, signal: SIGKILL)]
        }
        return [.say("\(waited); killing it", process: name), .signal(pid: pid, signal: SIGKILL)]
    }

    // MARK: Exits and restarts

    /// The child `pid` ended with `status`. What comes next depends on why it ran: a stopping
    /// one has stopped, a re-planned one starts again at once with `arguments`, a failed one
    /// restarts after its backoff or crash-loops, one that exited with 0 has completed.
    mutating func exited(
        pid: pid_t, status: ExitStatus, at now: ContinuousClock.Instant, arguments: [String]
    ) -> [SupervisorAction] {
        guard pid == self.pid else { return [] }
        self.pid = nil
        lastExit = status
        let ran = startedAt.map { now - $0 }
        startedAt = nil
        var actions: [SupervisorAction] = []
        if let pending = timer {
            timer = nil
            actions.append(.cancelTimer(pending))
        }
        let message: String
        var next: [SupervisorAction] = []
        switch phase {
        case .stopping:
            phase = .stopped
            message = "stopped"
        case .failed:
            message = "not restarted: \(failure ?? "it failed")"
        case .replanning:
            message = "restarting now"
            next = launch(arguments: arguments)
        case .starting, .ready,
            // Not running, so not reached (the pid matched): a failure, as the safe reading.
            .pending, .launching, .restarting, .stopped, .exited, .crashLooping:
            if status.succeeded {
                phase = .exited
                message = "completed; not restarted"
                break
            }
            let policy = spec.restart
            let ranLong = ran.map { $0 >= policy.resetAfter } ?? false
            failuresInARow = ranLong ? 1 : failuresInARow + 1
            guard failuresInARow <= policy.maximumRestarts else {
                phase = .crashLooping
                message =
                    "crash-looping: failed \(counted(failuresInARow, "time")) in a row; not restarting "
                    + "(max_restarts \(policy.maximumRestarts)); see \(logPath)"
                next = [.reportCrashLoop(process: name, failures: failuresInARow)]
                break
            }
            restarts += 1
            phase = .restarting
            let delay = policy.backoff(beforeRestart: failuresInARow)
            let restart = LifecycleTimer.restart(process: name, restart: restarts)
            timer = restart
            message =
                "restarting in \(delay.inMilliseconds) ms (restart \(failuresInARow) of \(policy.maximumRestarts))"
            next = [.scheduleTimer(after: delay, timer: restart)]
        }
        var exited = Bureau_System_ProcessExited()
        exited.process = name
        exited.pid = pid
        exited.exitCode = status.exitCode
        exited.signal = status.signal
        exited.restarts = UInt32(clamping: restarts)
        exited.message = message
        actions += [.say("\(name) (pid \(pid)) \(status.text); \(message)", process: name), .publish(.exited(exited))]
        return actions + next
    }

    /// The backoff passed: start again with `arguments`.
    mutating func restartDue(restart: Int, arguments: [String]) -> [SupervisorAction] {
        guard phase == .restarting, timer == .restart(process: name, restart: restart) else { return [] }
        timer = nil
        return launch(arguments: arguments)
    }

    /// A dependency now reports another readiness than this child was started with: stop it to
    /// start it again at once with the new one (`because` says why).
    mutating func replan(because: String) -> [SupervisorAction] {
        guard let pid, phase == .starting || phase == .ready else { return [] }
        phase = .replanning
        var actions: [SupervisorAction] = []
        if let pending = timer {
            timer = nil
            actions.append(.cancelTimer(pending))
        }
        return actions + [.say("restarting \(name): \(because)", process: name), .signal(pid: pid, signal: SIGTERM)]
    }

    // MARK: Stopping

    /// The deployment stops: what never ran or waits to restart is stopped now; a running child
    /// (or one being launched) waits for its turn (``terminate(timeout:)``).
    mutating func halt() -> [SupervisorAction] {
        var actions: [SupervisorAction] = []
        switch phase {
        case .pending:
            phase = .stopped
        case .restarting:
            phase = .stopped
            if let pending = timer {
                timer = nil
                actions.append(.cancelTimer(pending))
            }
        case .launching, .starting, .ready, .replanning:
            phase = .stopping
            if let pending = timer {
                timer = nil
                actions.append(.cancelTimer(pending))
            }
        case .stopping, .stopped, .exited, .crashLooping, .failed:
            break
        }
        return actions
    }

    /// Its turn to stop: SIGTERM, and SIGKILL if it has not exited within `timeout`.
    mutating func terminate(timeout: Duration) -> [SupervisorAction] {
        guard phase == .stopping, let pid else { return [] }
        let stop = LifecycleTimer.stop(process: name, pid: pid)
        timer = stop
        return [.signal(pid: pid, signal: SIGTERM), .scheduleTimer(after: timeout, timer: stop)]
    }

    /// `stop_timeout_s` passed since SIGTERM.
    mutating func stopOverdue(pid: pid_t, timeout: Duration) -> [SupervisorAction] {
        guard phase == .stopping, timer == .stop(process: name, pid: pid) else { return [] }
        timer = nil
        return [
            .say("\(name) did not stop within \(timeout.inMilliseconds) ms of SIGTERM; sending SIGKILL", process: name),
            .signal(pid: pid, signal: SIGKILL),
        ]
    }

}
