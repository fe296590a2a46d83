import Guards

#if canImport(Glibc)
    import Glibc
#endif

/// A whole deployment's life under the supervisor, as a value: the start plan, every process's
/// ``ProcessLifecycle``, re-planning, and the order of a stop. Each input returns the actions
/// to perform (``SupervisorAction``); the time of each input is passed in. ``Supervisor``
/// performs the actions and feeds back what came of them.
///
/// - **Start.** Wave by wave, in dependency order: a wave is every process whose dependencies
///   are all ready; the next starts once each of it is ready. A process that does not report
///   readiness is ready once launched. A process that exits before it is ready is restarted as
///   any other, and its wave waits; if it crash-loops, completes, or is not ready within
///   `ready_timeout_s` of its first launch, the deployment fails and stops.
/// - **Re-planning.** When a process becomes ready, every running process whose arguments name
///   its readiness (`${name.ready}`) and were substituted with another value is stopped and
///   started again at once with the new one (neither a failure nor a restart). Processes that
///   only depend on it are left alone: they reconnect by themselves. A dependency that stops for
///   good (crash-looping, completed) does not stop its dependents.
/// - **Stop.** What has not started or waits to restart stops at once; the rest one at a time,
///   the last started first and the bus last of all, once every other child is gone: SIGTERM,
///   SIGKILL after `stop_timeout_s`. Before the bus stops, the supervisor's own events (the
///   other children's exits among them) get ``drainTimeout`` to reach it. A deployment that
///   joins a bus on another machine gives them the same time once its last child has exited,
///   before it says it stopped: that bus stays, and only the supervisor's client holds them.
struct DeploymentLifecycle: Sendable, Equatable {
    /// What happens to a deployment from outside the lifecycle: requests, what came of an
    /// action, a timer.
    enum Input: Sendable, Equatable {
        case start
        case launched(process: String, pid: pid_t)
        case launchFailed(process: String, reason: String)
        case reportedReady(process: String, pid: pid_t, detail: String)
        case exited(process: String, pid: pid_t, status: ExitStatus)
        case timerFired(LifecycleTimer)
        case eventsDrained
        case stop
    }

    enum Phase: Sendable, Equatable {
        case idle
        /// Starting `wave`; `placed` are the processes of the waves before, all ready once.
        case starting(began: ContinuousClock.Instant, wave: [String], placed: Set<String>)
        /// Every process was ready once.
        case running
        case stopping(StopSequence)
        case stopped
    }

    /// Where a stop is: who is stopped now, who comes next.
    struct StopSequence: Sendable, Equatable {
        /// Still to stop, in order.
        var queue: [String]
        /// Being stopped: waiting for its exit (or its launch, or the drain before it).
        var current: String?
        /// Waiting for the supervisor's events to reach the bus: before `current` (the bus) stops,
        /// or, with `current` nil, before the stop ends (a bus on another machine).
        var draining = false
        /// The events had their time to reach a bus on another machine after the last exit.
        var drainedAtEnd = false
        /// How many processes the stop began with, for the last line.
        var count: Int
    }

    /// How long the supervisor's queued events may take to reach the bus before it stops.
    static let drainTimeout = Duration.seconds(3)

    let deployment: Deployment
    /// Process names in start order.
    let order: [String]
    private(set) var phase = Phase.idle
    private(set) var processes: [String: ProcessLifecycle]

    /// - Parameter logPath: the file each process's output goes to (named in messages).
    init(deployment: Deployment, logPath: (String) -> String) {
        self.deployment = deployment
        order = deployment.startOrder.map(\.name)
        var processes: [String: ProcessLifecycle] = [:]
        for spec in deployment.processes {
            processes[spec.name] = ProcessLifecycle(spec: spec, logPath: logPath(spec.name))
        }
        self.processes = processes
    }

    /// The processes in start order.
    var inStartOrder: [ProcessLifecycle] { order.compactMap { processes[$0] } }

    /// Moves the deployment on by `input`, which happened at `now`.
    mutating func handle(_ input: Input, at now: ContinuousClock.Instant) -> [SupervisorAction] {
        switch input {
        case .start: start(at: now)
        case .launched(let name, let pid): launched(name, pid: pid, at: now)
        case .launchFailed(let name, let reason): launchFailed(name, reason: reason)
        case .reportedReady(let name, let pid, let detail): reportedReady(name, pid: pid, detail: detail, at: now)
        case .exited(let name, let pid, let status): exited(name, pid: pid, status: status, at: now)
        case .timerFired(let timer): timerFired(timer, at: now)
        case .eventsDrained: drained(cancelling: true)
        case .stop: stop()
        }
    }

    // MARK: Inputs

    mutating func start(at now: ContinuousClock.Instant) -> [SupervisorAction] {
        guard phase == .idle else { return [] }
        phase = .starting(began: now, wave: [], placed: [])
        return nextWave(at: now)
    }

    mutating func launched(_ name: String, pid: pid_t, at now: ContinuousClock.Instant) -> [SupervisorAction] {
        guard var process = processes[name], process.launchPending else {
            // Nothing asked for this child: do not leave it running unwatched.
            return [.signal(pid: pid, signal: SIGTERM)]
        }
        var actions = process.launched(pid: pid, at: now)
        processes[name] = process
        switch process.phase {
        case .ready:
            actions += becameReady(name, at: now)
        case .stopping:
            if case .stopping(let sequence) = phase, sequence.current == name, !sequence.draining {
                actions += terminate(name)
            }
        case .pending, .launching, .starting, .replanning, .restarting, .stopped, .exited, .crashLooping, .failed:
            break
        }
        if process.phase == .starting || process.phase == .ready, arguments(for: name) != process.arguments {
            // A dependency's readiness moved while this was launched with the old one.
            actions += replan(name, because: "a dependency's readiness changed while it was launched")
        }
        return actions
    }

    mutating func launchFailed(_ name: String, reason: String) -> [SupervisorAction] {
        guard var process = processes[name] else { return [] }
        var actions = process.launchFailed(reason: reason)
        processes[name] = process
        guard process.phase == .failed else { return actions }
        switch phase {
        case .starting(_, let wave, _) where wave.contains(name):
            actions += fail(SupervisorError(process.failure ?? "\(name): \(reason)"))
        case .stopping:
            actions += finished(name)
        case .idle, .starting, .running, .stopped:
            break
        }
        return actions
    }

    mutating func reportedReady(
        _ name: String, pid: pid_t, detail: String, at now: ContinuousClock.Instant
    ) -> [SupervisorAction] {
        guard var process = processes[name] else { return [] }
        var actions = process.reportedReady(pid: pid, detail: detail)
        processes[name] = process
        if !actions.isEmpty && process.phase == .ready {
            actions += becameReady(name, at: now)
        }
        return actions
    }

    mutating func exited(
        _ name: String, pid: pid_t, status: ExitStatus, at now: ContinuousClock.Instant
    ) -> [SupervisorAction] {
        guard var process = processes[name] else { return [] }
        var actions = process.exited(pid: pid, status: status, at: now, arguments: arguments(for: name))
        processes[name] = process
        guard !actions.isEmpty else { return [] }
        switch phase {
        case .starting(_, let wave, _) where wave.contains(name):
            let see = "see \(process.logPath)"
            switch process.phase {
            case .crashLooping:
                actions += fail(SupervisorError("\(name) kept failing before it was ready; \(see)"))
            case .exited, .stopped:
                actions += fail(SupervisorError("\(name) exited before it was ready; \(see)"))
            case .failed:
                actions += fail(SupervisorError(process.failure ?? "\(name) failed; \(see)"))
            case .pending, .launching, .starting, .ready, .replanning, .restarting, .stopping:
                break
            }
        case .stopping:
            actions += finished(name)
        case .idle, .starting, .running, .stopped:
            break
        }
        return actions
    }

    mutating func timerFired(_ timer: LifecycleTimer, at now: ContinuousClock.Instant) -> [SupervisorAction] {
        switch timer {
        case .restart(let name, let restart):
            let arguments = arguments(for: name)
            return processes[name]?.restartDue(restart: restart, arguments: arguments) ?? []
        case .readiness(let name, let pid):
            guard var process = processes[name] else { return [] }
            var actions = process.readinessOverdue(pid: pid)
            processes[name] = process
            if process.phase == .failed, case .starting(_, let wave, _) = phase, wave.contains(name) {
                actions += fail(SupervisorError(process.failure ?? "\(name) was not ready in time"))
            }
            return actions
        case .stop(let name, let pid):
            let timeout = deployment.stopTimeout
            return processes[name]?.stopOverdue(pid: pid, timeout: timeout) ?? []
        case .drain:
            return drained(cancelling: false)
        }
    }

    /// Stops the deployment (a request, a signal, the front-end quitting). Stopping one that is
    /// still starting fails its start.
    mutating func stop() -> [SupervisorAction] {
        switch phase {
        case .idle:
            return beginStop()
        case .starting:
            return fail(SupervisorError("stopped while starting"))
        case .running:
            return beginStop()
        case .stopping, .stopped:
            return []
        }
    }

    // MARK: Starting

    /// Launches the next wave, or says the deployment is ready when there is none.
    private mutating func nextWave(at now: ContinuousClock.Instant) -> [SupervisorAction] {
        guard case .starting(let began, _, let placed) = phase else { return [] }
        let remaining = order.filter { !placed.contains($0) }
        guard !remaining.isEmpty else {
            phase = .running
            let took = now - began
            return [
                .say("all \(counted(order.count, "process", "processes")) ready in \(took.inMilliseconds) ms"),
                .deploymentReady(took: took),
            ]
        }
        let wave = remaining.filter { name in processes[name]?.spec.dependsOn.allSatisfy(placed.contains) ?? true }
        guard !wave.isEmpty else { return fail(SupervisorError("a dependency cycle among \(remaining)")) }
        phase = .starting(began: began, wave: wave, placed: placed)
        var actions: [SupervisorAction] = []
        for name in wave {
            let arguments = arguments(for: name)
            actions += processes[name]?.launch(arguments: arguments) ?? []
        }
        return actions
    }

    /// `name` has just become ready: re-plan what was started with another readiness of it, and
    /// move the start on.
    private mutating func becameReady(_ name: String, at now: ContinuousClock.Instant) -> [SupervisorAction] {
        var actions: [SupervisorAction] = []
        let detail = processes[name]?.readyDetail ?? ""
        for other in order where other != name {
            guard let dependent = processes[other],
                dependent.spec.arguments.contains(where: { Substitution.references(in: $0).contains(name) }),
                dependent.phase == .starting || dependent.phase == .ready,
                arguments(for: other) != dependent.arguments
            else { continue }
            actions += replan(other, because: "\(name) now reports \(detail)")
        }
        if case .starting(let began, var wave, var placed) = phase, wave.contains(name) {
            wave.removeAll { $0 == name }
            placed.insert(name)
            phase = .starting(began: began, wave: wave, placed: placed)
            if wave.isEmpty { actions += nextWave(at: now) }
        }
        return actions
    }

    private mutating func replan(_ name: String, because: String) -> [SupervisorAction] {
        processes[name]?.replan(because: because) ?? []
    }

    /// `name`'s arguments with every `${other.ready}` replaced by what `other` reported last.
    func arguments(for name: String) -> [String] {
        var ready: [String: String] = [:]
        for (other, process) in processes { if let detail = process.readyDetail { ready[other] = detail } }
        return processes[name]?.spec.arguments.map { Substitution.apply($0, ready: ready) } ?? []
    }

    /// The start failed: say why, and stop.
    private mutating func fail(_ error: SupervisorError) -> [SupervisorAction] {
        [.deploymentFailed(error)] + beginStop()
    }

    // MARK: Stopping

    private mutating func beginStop() -> [SupervisorAction] {
        var actions: [SupervisorAction] = []
        var queue: [String] = []
        for name in order.reversed() {
            actions += processes[name]?.halt() ?? []
            if processes[name]?.phase == .stopping { queue.append(name) }
        }
        // The bus last, even after what started in its wave before it: every other exit goes on it.
        let buses = Set(queue.filter { processes[$0]?.isBus ?? false })
        queue = queue.filter { !buses.contains($0) } + queue.filter(buses.contains)
        phase = .stopping(StopSequence(queue: queue, count: queue.count))
        return actions + advance()
    }

    /// Begins stopping the next process in the queue, or ends the stop when none is left.
    private mutating func advance() -> [SupervisorAction] {
        guard case .stopping(var sequence) = phase, sequence.current == nil else { return [] }
        while let name = sequence.queue.first {
            guard let process = processes[name], process.phase == .stopping, process.isAlive else {
                sequence.queue.removeFirst()
                continue
            }
            if process.isBus, processes.values.contains(where: { !$0.isBus && $0.isAlive }) {
                // A child killed for its readiness is still exiting: its exit goes on the bus first.
                phase = .stopping(sequence)
                return []
            }
            sequence.queue.removeFirst()
            sequence.current = name
            if process.isBus {
                sequence.draining = true
                phase = .stopping(sequence)
                return [.drainEvents, .scheduleTimer(after: Self.drainTimeout, timer: .drain)]
            }
            phase = .stopping(sequence)
            // Still being launched: SIGTERM once its pid is known.
            return terminate(name)
        }
        phase = .stopping(sequence)
        return done()
    }

    /// SIGTERM to `name`, once its pid is known; SIGKILL after the stop timeout.
    private mutating func terminate(_ name: String) -> [SupervisorAction] {
        let timeout = deployment.stopTimeout
        return processes[name]?.terminate(timeout: timeout) ?? []
    }

    /// The supervisor's events reached the bus (or `cancelling` is false: their time ran out).
    private mutating func drained(cancelling: Bool) -> [SupervisorAction] {
        guard case .stopping(var sequence) = phase, sequence.draining else { return [] }
        sequence.draining = false
        let cancel: [SupervisorAction] = cancelling ? [.cancelTimer(.drain)] : []
        guard let current = sequence.current else {
            // The last exits had their time to reach the bus on another machine.
            sequence.drainedAtEnd = true
            phase = .stopping(sequence)
            return cancel + done()
        }
        phase = .stopping(sequence)
        return cancel + terminate(current)
    }

    /// `name` is no longer alive during a stop.
    private mutating func finished(_ name: String) -> [SupervisorAction] {
        guard case .stopping(var sequence) = phase, processes[name]?.isAlive == false else { return [] }
        var actions: [SupervisorAction] = []
        if sequence.current == name {
            if sequence.draining { actions.append(.cancelTimer(.drain)) }
            sequence.current = nil
            sequence.draining = false
            phase = .stopping(sequence)
            return actions + advance()
        }
        // Nobody being stopped: the bus may be waiting for this one, or the stop for the last.
        return sequence.current == nil ? advance() : []
    }

    /// Ends the stop once nothing runs (a process killed for its readiness may still be exiting).
    /// On a host whose bus is on another machine, the supervisor's events get their time to
    /// reach it first: the last exits are in no other process's hands.
    private mutating func done() -> [SupervisorAction] {
        guard case .stopping(var sequence) = phase, !processes.values.contains(where: \.isAlive) else { return [] }
        if deployment.remoteBus != nil, !sequence.drainedAtEnd {
            guard !sequence.draining else { return [] }
            sequence.draining = true
            phase = .stopping(sequence)
            return [.drainEvents, .scheduleTimer(after: Self.drainTimeout, timer: .drain)]
        }
        phase = .stopped
        return (sequence.count > 0 ? [.say("stopped \(counted(sequence.count, "process", "processes"))")] : []) + [
            .deploymentStopped
        ]
    }
}
