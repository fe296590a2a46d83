import Guards
import Testing

@testable import Supervisor

#if canImport(Glibc)
    import Glibc
#endif

/// A whole deployment's lifecycle, without a process: the start waves, re-planning, the stop,
/// and every action each input returns.
///
/// The deployment: `bus` and `server` first; `reducers` (ready once launched) depends on the
/// bus only; `adapter` depends on both and is given the server's readiness, `${server.ready}`.
/// Pids: bus 10, server 11, reducers 12, adapter 13; later children count on from 14.
struct DeploymentLifecycleTests {
    static let url = "http://127.0.0.1:4000"
    static let otherURL = "http://127.0.0.1:5000"
    static let serverArguments = ["serve", "rates", "--port", "0"]
    static let reducersArguments = ["run", "watchlist"]

    static func adapterArguments(_ url: String) -> [String] {
        ["run", "rates-adapter", "--set", "rates-url=\(url)"]
    }

    static func deployment(
        server restart: RestartPolicy = RestartPolicy(), serverReadyTimeout: Duration = .seconds(60),
        stopTimeout: Duration = .seconds(10)
    ) -> Deployment {
        Deployment(
            processes: [
                ProcessSpec(name: "bus", arguments: ["bus"]),
                ProcessSpec(
                    name: "server", arguments: serverArguments, readyTimeout: serverReadyTimeout, restart: restart),
                ProcessSpec(
                    name: "reducers", arguments: reducersArguments, dependsOn: ["bus"], reportsReadiness: false),
                ProcessSpec(
                    name: "adapter", arguments: ["run", "rates-adapter", "--set", "rates-url=${server.ready}"],
                    dependsOn: ["bus", "server"]),
            ],
            stopTimeout: stopTimeout)
    }

    static func lifecycle(_ deployment: Deployment = deployment()) -> DeploymentLifecycle {
        DeploymentLifecycle(deployment: deployment) { "/data/logs/\($0).log" }
    }

    /// Started, the first wave launched as bus 10 and server 11 at 0.1 s; the bus ready at 0.5 s.
    static func firstWaveLaunched(_ deployment: Deployment = deployment()) -> DeploymentLifecycle {
        var lifecycle = lifecycle(deployment)
        _ = lifecycle.handle(.start, at: time(0))
        _ = lifecycle.handle(.launched(process: "bus", pid: 10), at: time(0.1))
        _ = lifecycle.handle(.launched(process: "server", pid: 11), at: time(0.1))
        _ = lifecycle.handle(.reportedReady(process: "bus", pid: 10, detail: ""), at: time(0.5))
        return lifecycle
    }

    /// Every process ready, 2 s after the start; the server at ``url``.
    static func running(_ deployment: Deployment = deployment()) -> DeploymentLifecycle {
        var lifecycle = firstWaveLaunched(deployment)
        _ = lifecycle.handle(.reportedReady(process: "server", pid: 11, detail: url), at: time(1))
        _ = lifecycle.handle(.launched(process: "reducers", pid: 12), at: time(1.1))
        _ = lifecycle.handle(.launched(process: "adapter", pid: 13), at: time(1.1))
        _ = lifecycle.handle(.reportedReady(process: "adapter", pid: 13, detail: ""), at: time(2))
        return lifecycle
    }

    /// Stopping `lifecycle` (running) until the bus's turn: the others exited after SIGTERM.
    static func stoppedUpToTheBus(_ lifecycle: inout DeploymentLifecycle) -> [SupervisorAction] {
        var actions = lifecycle.handle(.stop, at: time(10))
        for (name, pid) in [("adapter", 13), ("reducers", 12), ("server", 11)] {
            actions += lifecycle.handle(.exited(process: name, pid: pid_t(pid), status: .signal(SIGTERM)), at: time(11))
        }
        return actions
    }

    /// The bus's turn at the end of a stop (every other process gone, its events draining):
    /// drained at `seconds`, then the bus (pid 10) exiting with `status` 0.1 s later. Returns what
    /// each of the two did.
    static func busTurn(
        _ lifecycle: inout DeploymentLifecycle, drainedAt seconds: Double,
        exiting status: Guards.ExitStatus = .signal(SIGTERM)
    ) -> (drained: [SupervisorAction], busExit: [SupervisorAction]) {
        let drained = lifecycle.handle(.eventsDrained, at: time(seconds))
        let busExit = lifecycle.handle(.exited(process: "bus", pid: 10, status: status), at: time(seconds + 0.1))
        return (drained, busExit)
    }

    /// What the end of the drain does at the bus's turn: the bus (pid 10) terminated, its stop timed.
    static let busTerminated: [SupervisorAction] = [
        .cancelTimer(.drain), .term(10), .scheduleTimer(after: .seconds(10), timer: .stop(process: "bus", pid: 10)),
    ]

    /// What the bus's exit does as the last of a stop: its exit, `said` ("ended with exit code 0"),
    /// published, then the stop's `summary` and its end.
    static func busStoppedLast(_ status: Guards.ExitStatus, said: String, summary: String) -> [SupervisorAction] {
        [
            .cancelTimer(.stop(process: "bus", pid: 10)),
            .say("bus (pid 10) \(said); stopped", process: "bus"),
            .exited("bus", pid: 10, status, "stopped"),
            .say(summary),
            .deploymentStopped,
        ]
    }

    func phase(_ lifecycle: DeploymentLifecycle, _ name: String) -> ProcessLifecycle.Phase? {
        lifecycle.processes[name]?.phase
    }

    // MARK: Starting

    @Test func theStartGoesWaveByWaveInDependencyOrderAndSaysWhenAllAreReady() {
        var lifecycle = Self.lifecycle()
        #expect(lifecycle.order == ["bus", "server", "reducers", "adapter"])

        let start = lifecycle.handle(.start, at: time(0))
        #expect(
            start == [
                .spawn(process: "bus", arguments: ["bus"]),
                .spawn(process: "server", arguments: Self.serverArguments),
            ])
        #expect(lifecycle.phase == .starting(began: time(0), wave: ["bus", "server"], placed: []))
        #expect(phase(lifecycle, "reducers") == .pending && phase(lifecycle, "adapter") == .pending)

        let bus = lifecycle.handle(.launched(process: "bus", pid: 10), at: time(0.1))
        #expect(
            bus == [
                .say("started bus (pid 10): bureau bus", process: "bus"),
                .started("bus", pid: 10, ["bus"]),
                .scheduleTimer(after: .seconds(60), timer: .readiness(process: "bus", pid: 10)),
            ])
        _ = lifecycle.handle(.launched(process: "server", pid: 11), at: time(0.1))

        let busReady = lifecycle.handle(.reportedReady(process: "bus", pid: 10, detail: ""), at: time(0.5))
        #expect(
            busReady == [
                .cancelTimer(.readiness(process: "bus", pid: 10)), .say("bus is ready", process: "bus"), .connectEvents,
            ],
            "the next wave waits for the server")
        #expect(lifecycle.phase == .starting(began: time(0), wave: ["server"], placed: ["bus"]))

        let serverReady = lifecycle.handle(.reportedReady(process: "server", pid: 11, detail: Self.url), at: time(1))
        #expect(
            serverReady == [
                .cancelTimer(.readiness(process: "server", pid: 11)),
                .say("server is ready at \(Self.url)", process: "server"),
                .spawn(process: "reducers", arguments: Self.reducersArguments),
                .spawn(process: "adapter", arguments: Self.adapterArguments(Self.url)),
            ],
            "the second wave, the server's readiness substituted")

        let reducers = lifecycle.handle(.launched(process: "reducers", pid: 12), at: time(1.1))
        #expect(
            reducers == [
                .say("started reducers (pid 12): bureau run watchlist", process: "reducers"),
                .started("reducers", pid: 12, Self.reducersArguments),
                .say("reducers is ready", process: "reducers"),
            ],
            "ready once launched: it does not report readiness")
        let adapter = lifecycle.handle(.launched(process: "adapter", pid: 13), at: time(1.1))
        #expect(
            adapter == [
                .say(
                    "started adapter (pid 13): bureau run rates-adapter --set rates-url=\(Self.url)",
                    process: "adapter"),
                .started("adapter", pid: 13, Self.adapterArguments(Self.url)),
                .scheduleTimer(after: .seconds(60), timer: .readiness(process: "adapter", pid: 13)),
            ])
        #expect(lifecycle.phase == .starting(began: time(0), wave: ["adapter"], placed: ["bus", "server", "reducers"]))

        let ready = lifecycle.handle(.reportedReady(process: "adapter", pid: 13, detail: ""), at: time(2.5))
        #expect(
            ready == [
                .cancelTimer(.readiness(process: "adapter", pid: 13)),
                .say("adapter is ready", process: "adapter"),
                .say("all 4 processes ready in 2500 ms"),
                .deploymentReady(took: .milliseconds(2500)),
            ])
        #expect(lifecycle.phase == .running)
        #expect(lifecycle.inStartOrder.allSatisfy { $0.phase == .ready })
    }

    @Test func aStartedDeploymentIsNotStartedAgain() {
        var lifecycle = Self.firstWaveLaunched()
        let before = lifecycle
        #expect(lifecycle.handle(.start, at: time(1)) == [])
        #expect(lifecycle == before)
    }

    @Test func aProcessThatExitsBeforeItIsReadyRestartsAndItsWaveWaitsForIt() {
        var lifecycle = Self.lifecycle()
        _ = lifecycle.handle(.start, at: time(0))
        _ = lifecycle.handle(.launched(process: "bus", pid: 10), at: time(0.1))
        _ = lifecycle.handle(.launched(process: "server", pid: 11), at: time(0.1))

        let exit = lifecycle.handle(.exited(process: "server", pid: 11, status: .code(1)), at: time(0.3))
        let message = "restarting in 500 ms (restart 1 of 5)"
        #expect(
            exit == [
                .cancelTimer(.readiness(process: "server", pid: 11)),
                .say("server (pid 11) ended with exit code 1; \(message)", process: "server"),
                .exited("server", pid: 11, .code(1), restarts: 1, message),
                .scheduleTimer(after: .milliseconds(500), timer: .restart(process: "server", restart: 1)),
            ])
        let busReady = lifecycle.handle(.reportedReady(process: "bus", pid: 10, detail: ""), at: time(0.5))
        #expect(!busReady.contains { if case .spawn = $0 { true } else { false } }, "the wave waits for the server")
        #expect(lifecycle.phase == .starting(began: time(0), wave: ["server"], placed: ["bus"]))

        let due = lifecycle.handle(.timerFired(.restart(process: "server", restart: 1)), at: time(0.8))
        #expect(due == [.spawn(process: "server", arguments: Self.serverArguments)])
        let launched = lifecycle.handle(.launched(process: "server", pid: 14), at: time(0.9))
        #expect(
            launched == [
                .say("restarted server (pid 14): bureau serve rates --port 0", process: "server"),
                .started("server", pid: 14, Self.serverArguments, restarts: 1),
                .scheduleTimer(after: .seconds(60), timer: .readiness(process: "server", pid: 14)),
            ])
        let ready = lifecycle.handle(.reportedReady(process: "server", pid: 14, detail: Self.url), at: time(1))
        #expect(
            ready == [
                .cancelTimer(.readiness(process: "server", pid: 14)),
                .say("server is ready at \(Self.url)", process: "server"),
                .spawn(process: "reducers", arguments: Self.reducersArguments),
                .spawn(process: "adapter", arguments: Self.adapterArguments(Self.url)),
            ])
    }

    @Test func aProcessThatCrashLoopsWhileStartingFailsTheDeploymentAndWhatRunsIsStopped() {
        var lifecycle = Self.firstWaveLaunched(Self.deployment(server: RestartPolicy(maximumRestarts: 0)))
        let exit = lifecycle.handle(.exited(process: "server", pid: 11, status: .code(1)), at: time(0.6))
        let message =
            "crash-looping: failed 1 time in a row; not restarting (max_restarts 0); see /data/logs/server.log"
        #expect(
            exit == [
                .cancelTimer(.readiness(process: "server", pid: 11)),
                .say("server (pid 11) ended with exit code 1; \(message)", process: "server"),
                .exited("server", pid: 11, .code(1), message),
                .reportCrashLoop(process: "server", failures: 1),
                .deploymentFailed(
                    SupervisorError("server kept failing before it was ready; see /data/logs/server.log")),
                .drainEvents, .scheduleTimer(after: DeploymentLifecycle.drainTimeout, timer: .drain),
            ],
            "the bus alone runs: its turn, its events drained first")
        #expect(phase(lifecycle, "reducers") == .stopped && phase(lifecycle, "adapter") == .stopped, "never started")

        let (drained, busExit) = Self.busTurn(&lifecycle, drainedAt: 0.7, exiting: .code(0))
        #expect(drained == Self.busTerminated)
        #expect(busExit == Self.busStoppedLast(.code(0), said: "ended with exit code 0", summary: "stopped 1 process"))
        #expect(lifecycle.phase == .stopped)
    }

    @Test func aProcessThatCompletesBeforeItIsReadyFailsTheDeployment() {
        var lifecycle = Self.lifecycle()
        _ = lifecycle.handle(.start, at: time(0))
        _ = lifecycle.handle(.launched(process: "bus", pid: 10), at: time(0.1))
        _ = lifecycle.handle(.launched(process: "server", pid: 11), at: time(0.1))
        let exit = lifecycle.handle(.exited(process: "server", pid: 11, status: .code(0)), at: time(0.3))
        #expect(
            exit == [
                .cancelTimer(.readiness(process: "server", pid: 11)),
                .say("server (pid 11) ended with exit code 0; completed; not restarted", process: "server"),
                .exited("server", pid: 11, .code(0), "completed; not restarted"),
                .deploymentFailed(SupervisorError("server exited before it was ready; see /data/logs/server.log")),
                .cancelTimer(.readiness(process: "bus", pid: 10)),
                .drainEvents, .scheduleTimer(after: DeploymentLifecycle.drainTimeout, timer: .drain),
            ],
            "the bus, not ready yet, is stopped too")
        #expect(phase(lifecycle, "server") == .exited)
    }

    @Test func aProcessNotReadyInTimeFailsTheDeploymentAndTheBusStopsOnceItsKilledChildIsGone() {
        var lifecycle = Self.firstWaveLaunched(Self.deployment(serverReadyTimeout: .seconds(2)))
        let overdue = lifecycle.handle(.timerFired(.readiness(process: "server", pid: 11)), at: time(2.1))
        let failure = "server was not ready within 2 s (ready_timeout_s); see /data/logs/server.log"
        #expect(
            overdue == [.kill(11), .deploymentFailed(SupervisorError(failure))],
            "the bus waits: the killed server's exit goes on the bus first")
        #expect(phase(lifecycle, "bus") == .stopping && lifecycle.processes["bus"]?.pid == 10)

        let serverExit = lifecycle.handle(.exited(process: "server", pid: 11, status: .signal(SIGKILL)), at: time(2.2))
        #expect(
            serverExit == [
                .say("server (pid 11) ended by signal SIGKILL (9); not restarted: \(failure)", process: "server"),
                .exited("server", pid: 11, .signal(SIGKILL), "not restarted: \(failure)"),
                .drainEvents, .scheduleTimer(after: DeploymentLifecycle.drainTimeout, timer: .drain),
            ])
        #expect(phase(lifecycle, "server") == .failed)
        let (drained, busExit) = Self.busTurn(&lifecycle, drainedAt: 2.3)
        #expect(drained == Self.busTerminated)
        let said = "ended by signal SIGTERM (15)"
        #expect(busExit == Self.busStoppedLast(.signal(SIGTERM), said: said, summary: "stopped 1 process"))
    }

    @Test func aLaunchThatFailsWhileStartingFailsTheDeploymentAndALaunchUnderWayIsWaitedFor() {
        var lifecycle = Self.lifecycle()
        _ = lifecycle.handle(.start, at: time(0))
        let reason = "could not start /bin/bureau: No such file or directory"
        let failed = lifecycle.handle(.launchFailed(process: "server", reason: reason), at: time(0.1))
        #expect(
            failed == [
                .say("server: \(reason)", process: "server"),
                .deploymentFailed(SupervisorError("server: \(reason)")),
                .drainEvents, .scheduleTimer(after: DeploymentLifecycle.drainTimeout, timer: .drain),
            ])
        #expect(
            lifecycle.handle(.eventsDrained, at: time(0.2)) == [.cancelTimer(.drain)],
            "the bus's pid is not known yet")
        let launched = lifecycle.handle(.launched(process: "bus", pid: 10), at: time(0.3))
        #expect(
            launched == [
                .say("started bus (pid 10): bureau bus", process: "bus"),
                .started("bus", pid: 10, ["bus"]),
                .term(10), .scheduleTimer(after: .seconds(10), timer: .stop(process: "bus", pid: 10)),
            ])
        let exit = lifecycle.handle(.exited(process: "bus", pid: 10, status: .signal(SIGTERM)), at: time(0.4))
        #expect(exit.suffix(2) == [.say("stopped 1 process"), .deploymentStopped])
    }

    @Test func aDependencyCycleFailsTheDeploymentOnceWhatCanStartHasStarted() {
        var cycle = Self.lifecycle(
            Deployment(processes: [
                ProcessSpec(name: "a", arguments: ["run", "a"], dependsOn: ["b"]),
                ProcessSpec(name: "b", arguments: ["run", "b"], dependsOn: ["a"]),
            ]))
        #expect(
            cycle.handle(.start, at: time(0)) == [
                .deploymentFailed(SupervisorError(#"a dependency cycle among ["a", "b"]"#)), .deploymentStopped,
            ])
        #expect(cycle.phase == .stopped)

        var partial = Self.lifecycle(
            Deployment(processes: [
                ProcessSpec(name: "a", arguments: ["run", "a"], dependsOn: ["b"]),
                ProcessSpec(name: "b", arguments: ["run", "b"], dependsOn: ["a"]),
                ProcessSpec(name: "c", arguments: ["run", "c"], reportsReadiness: false),
            ]))
        #expect(partial.handle(.start, at: time(0)) == [.spawn(process: "c", arguments: ["run", "c"])])
        let launched = partial.handle(.launched(process: "c", pid: 20), at: time(0.1))
        #expect(
            launched == [
                .say("started c (pid 20): bureau run c", process: "c"),
                .started("c", pid: 20, ["run", "c"]),
                .say("c is ready", process: "c"),
                .deploymentFailed(SupervisorError(#"a dependency cycle among ["a", "b"]"#)),
                .term(20), .scheduleTimer(after: .seconds(10), timer: .stop(process: "c", pid: 20)),
            ])
    }

    // MARK: Re-planning

    @Test func aDependentGivenAReadinessIsRestartedAtOnceWithTheNewValueWhenItChanges() {
        var lifecycle = Self.running()
        let exit = lifecycle.handle(.exited(process: "server", pid: 11, status: .code(1)), at: time(5))
        let message = "restarting in 500 ms (restart 1 of 5)"
        #expect(
            exit == [
                .say("server (pid 11) ended with exit code 1; \(message)", process: "server"),
                .exited("server", pid: 11, .code(1), restarts: 1, message),
                .scheduleTimer(after: .milliseconds(500), timer: .restart(process: "server", restart: 1)),
            ],
            "its dependents keep running while it restarts")
        _ = lifecycle.handle(.timerFired(.restart(process: "server", restart: 1)), at: time(5.5))
        _ = lifecycle.handle(.launched(process: "server", pid: 14), at: time(5.5))

        let ready = lifecycle.handle(.reportedReady(process: "server", pid: 14, detail: Self.otherURL), at: time(6))
        #expect(
            ready == [
                .cancelTimer(.readiness(process: "server", pid: 14)),
                .say("server is ready at \(Self.otherURL)", process: "server"),
                .say("restarting adapter: server now reports \(Self.otherURL)", process: "adapter"),
                .term(13),
            ],
            "the reducers depend on nothing the server reports: left alone")
        #expect(phase(lifecycle, "adapter") == .replanning)
        #expect(phase(lifecycle, "reducers") == .ready && lifecycle.processes["reducers"]?.pid == 12)

        let replanned = lifecycle.handle(.exited(process: "adapter", pid: 13, status: .signal(SIGTERM)), at: time(6.1))
        #expect(
            replanned == [
                .say("adapter (pid 13) ended by signal SIGTERM (15); restarting now", process: "adapter"),
                .exited("adapter", pid: 13, .signal(SIGTERM), "restarting now"),
                .spawn(process: "adapter", arguments: Self.adapterArguments(Self.otherURL)),
            ],
            "at once, with the new value, and not as a failure")
        let launched = lifecycle.handle(.launched(process: "adapter", pid: 15), at: time(6.2))
        #expect(
            launched == [
                .say(
                    "restarted adapter (pid 15): bureau run rates-adapter --set rates-url=\(Self.otherURL)",
                    process: "adapter"),
                .started("adapter", pid: 15, Self.adapterArguments(Self.otherURL)),
                .scheduleTimer(after: .seconds(60), timer: .readiness(process: "adapter", pid: 15)),
            ])
        #expect(
            lifecycle.handle(.reportedReady(process: "adapter", pid: 15, detail: ""), at: time(6.5)) == [
                .cancelTimer(.readiness(process: "adapter", pid: 15)), .say("adapter is ready", process: "adapter"),
            ],
            "the deployment was ready already")
        #expect(lifecycle.phase == .running)
        #expect(lifecycle.processes["adapter"]?.restarts == 0 && lifecycle.processes["adapter"]?.failuresInARow == 0)
    }

    @Test func aDependencyReadyAgainWithTheSameValueAndPlainDependentsAreLeftAlone() {
        var lifecycle = Self.running()
        _ = lifecycle.handle(.exited(process: "server", pid: 11, status: .signal(SIGKILL)), at: time(5))
        _ = lifecycle.handle(.timerFired(.restart(process: "server", restart: 1)), at: time(5.5))
        _ = lifecycle.handle(.launched(process: "server", pid: 14), at: time(5.5))
        #expect(
            lifecycle.handle(.reportedReady(process: "server", pid: 14, detail: Self.url), at: time(6)) == [
                .cancelTimer(.readiness(process: "server", pid: 14)),
                .say("server is ready at \(Self.url)", process: "server"),
            ])

        _ = lifecycle.handle(.exited(process: "bus", pid: 10, status: .signal(SIGKILL)), at: time(7))
        _ = lifecycle.handle(.timerFired(.restart(process: "bus", restart: 1)), at: time(7.5))
        _ = lifecycle.handle(.launched(process: "bus", pid: 15), at: time(7.5))
        #expect(
            lifecycle.handle(.reportedReady(process: "bus", pid: 15, detail: ""), at: time(8)) == [
                .cancelTimer(.readiness(process: "bus", pid: 15)), .say("bus is ready", process: "bus"),
                .connectEvents,
            ],
            "the reducers and the adapter reconnect by themselves")
        #expect(lifecycle.processes["reducers"]?.pid == 12 && lifecycle.processes["adapter"]?.pid == 13)
        #expect(phase(lifecycle, "reducers") == .ready && phase(lifecycle, "adapter") == .ready)
    }

    @Test func aDependentLaunchedWithAnOldReadinessIsReplannedOnceItsPidIsKnown() {
        var lifecycle = Self.running()
        _ = lifecycle.handle(.exited(process: "server", pid: 11, status: .code(1)), at: time(5))
        _ = lifecycle.handle(.exited(process: "adapter", pid: 13, status: .code(1)), at: time(5))
        _ = lifecycle.handle(.timerFired(.restart(process: "server", restart: 1)), at: time(5.5))
        // The adapter's backoff passes before the server is ready: launched with the old value.
        #expect(
            lifecycle.handle(.timerFired(.restart(process: "adapter", restart: 1)), at: time(5.5)) == [
                .spawn(process: "adapter", arguments: Self.adapterArguments(Self.url))
            ])
        _ = lifecycle.handle(.launched(process: "server", pid: 14), at: time(5.6))
        #expect(
            lifecycle.handle(.reportedReady(process: "server", pid: 14, detail: Self.otherURL), at: time(6)) == [
                .cancelTimer(.readiness(process: "server", pid: 14)),
                .say("server is ready at \(Self.otherURL)", process: "server"),
            ],
            "no pid to signal yet")

        let launched = lifecycle.handle(.launched(process: "adapter", pid: 15), at: time(6.1))
        #expect(
            launched == [
                .say(
                    "restarted adapter (pid 15): bureau run rates-adapter --set rates-url=\(Self.url)",
                    process: "adapter"),
                .started("adapter", pid: 15, Self.adapterArguments(Self.url), restarts: 1),
                .scheduleTimer(after: .seconds(60), timer: .readiness(process: "adapter", pid: 15)),
                .cancelTimer(.readiness(process: "adapter", pid: 15)),
                .say(
                    "restarting adapter: a dependency's readiness changed while it was launched", process: "adapter"),
                .term(15),
            ])
        let exit = lifecycle.handle(.exited(process: "adapter", pid: 15, status: .signal(SIGTERM)), at: time(6.2))
        #expect(exit.last == .spawn(process: "adapter", arguments: Self.adapterArguments(Self.otherURL)))
    }

    @Test func aDependencyThatCrashLoopsOnceRunningIsReportedAndDoesNotStopItsDependents() {
        var lifecycle = Self.running(Self.deployment(server: RestartPolicy(maximumRestarts: 0)))
        let exit = lifecycle.handle(.exited(process: "server", pid: 11, status: .code(1)), at: time(5))
        let message =
            "crash-looping: failed 1 time in a row; not restarting (max_restarts 0); see /data/logs/server.log"
        #expect(
            exit == [
                .say("server (pid 11) ended with exit code 1; \(message)", process: "server"),
                .exited("server", pid: 11, .code(1), message),
                .reportCrashLoop(process: "server", failures: 1),
            ])
        #expect(phase(lifecycle, "server") == .crashLooping)
        #expect(phase(lifecycle, "adapter") == .ready && lifecycle.processes["adapter"]?.pid == 13)
        #expect(lifecycle.phase == .running)
    }

    // MARK: Stopping

    @Test func aStopTerminatesTheLastStartedFirstOneAtATimeAndDrainsEventsBeforeTheBus() {
        var lifecycle = Self.running()
        let stop = lifecycle.handle(.stop, at: time(10))
        #expect(stop == [.term(13), .scheduleTimer(after: .seconds(10), timer: .stop(process: "adapter", pid: 13))])
        #expect(lifecycle.inStartOrder.allSatisfy { $0.phase == .stopping })

        let adapter = lifecycle.handle(.exited(process: "adapter", pid: 13, status: .signal(SIGTERM)), at: time(10.1))
        #expect(
            adapter == [
                .cancelTimer(.stop(process: "adapter", pid: 13)),
                .say("adapter (pid 13) ended by signal SIGTERM (15); stopped", process: "adapter"),
                .exited("adapter", pid: 13, .signal(SIGTERM), "stopped"),
                .term(12), .scheduleTimer(after: .seconds(10), timer: .stop(process: "reducers", pid: 12)),
            ])
        let reducers = lifecycle.handle(.exited(process: "reducers", pid: 12, status: .code(0)), at: time(10.2))
        #expect(
            reducers == [
                .cancelTimer(.stop(process: "reducers", pid: 12)),
                .say("reducers (pid 12) ended with exit code 0; stopped", process: "reducers"),
                .exited("reducers", pid: 12, .code(0), "stopped"),
                .term(11), .scheduleTimer(after: .seconds(10), timer: .stop(process: "server", pid: 11)),
            ])
        let server = lifecycle.handle(.exited(process: "server", pid: 11, status: .signal(SIGTERM)), at: time(10.3))
        #expect(
            server == [
                .cancelTimer(.stop(process: "server", pid: 11)),
                .say("server (pid 11) ended by signal SIGTERM (15); stopped", process: "server"),
                .exited("server", pid: 11, .signal(SIGTERM), "stopped"),
                .drainEvents, .scheduleTimer(after: .seconds(3), timer: .drain),
            ],
            "the bus last, once the supervisor's events reached it")
        #expect(phase(lifecycle, "bus") == .stopping && lifecycle.processes["bus"]?.timer == nil, "not signalled yet")

        let (drained, bus) = Self.busTurn(&lifecycle, drainedAt: 10.4, exiting: .code(0))
        #expect(drained == Self.busTerminated)
        #expect(bus == Self.busStoppedLast(.code(0), said: "ended with exit code 0", summary: "stopped 4 processes"))
        #expect(lifecycle.phase == .stopped)
        #expect(lifecycle.inStartOrder.allSatisfy { $0.phase == .stopped && !$0.isAlive })
    }

    @Test func theBusStopsLastEvenWhenAProcessStartedBeforeIt() {
        // In the bus's wave, listed before it: started first, so stopped after it by the reverse
        // order alone, yet its exit must reach the bus.
        var lifecycle = Self.lifecycle(
            Deployment(processes: [
                ProcessSpec(name: "server", arguments: Self.serverArguments, reportsReadiness: false),
                ProcessSpec(name: "bus", arguments: ["bus"], reportsReadiness: false),
            ]))
        _ = lifecycle.handle(.start, at: time(0))
        _ = lifecycle.handle(.launched(process: "server", pid: 11), at: time(0.1))
        let ready = lifecycle.handle(.launched(process: "bus", pid: 10), at: time(0.1))
        #expect(ready.last == .deploymentReady(took: .milliseconds(100)))

        let stop = lifecycle.handle(.stop, at: time(1))
        #expect(stop == [.term(11), .scheduleTimer(after: .seconds(10), timer: .stop(process: "server", pid: 11))])
        let server = lifecycle.handle(.exited(process: "server", pid: 11, status: .signal(SIGTERM)), at: time(1.1))
        #expect(
            server == [
                .cancelTimer(.stop(process: "server", pid: 11)),
                .say("server (pid 11) ended by signal SIGTERM (15); stopped", process: "server"),
                .exited("server", pid: 11, .signal(SIGTERM), "stopped"),
                .drainEvents, .scheduleTimer(after: .seconds(3), timer: .drain),
            ])
    }

    @Test func aProcessThatDoesNotStopWithinTheStopTimeoutIsKilledAndTheStopGoesOn() {
        var lifecycle = Self.running(Self.deployment(stopTimeout: .seconds(2)))
        #expect(
            lifecycle.handle(.stop, at: time(10)) == [
                .term(13), .scheduleTimer(after: .seconds(2), timer: .stop(process: "adapter", pid: 13)),
            ])
        let overdue = lifecycle.handle(.timerFired(.stop(process: "adapter", pid: 13)), at: time(12))
        #expect(
            overdue == [
                .say("adapter did not stop within 2000 ms of SIGTERM; sending SIGKILL", process: "adapter"), .kill(13),
            ])
        let exit = lifecycle.handle(.exited(process: "adapter", pid: 13, status: .signal(SIGKILL)), at: time(12.1))
        #expect(
            exit == [
                .say("adapter (pid 13) ended by signal SIGKILL (9); stopped", process: "adapter"),
                .exited("adapter", pid: 13, .signal(SIGKILL), "stopped"),
                .term(12), .scheduleTimer(after: .seconds(2), timer: .stop(process: "reducers", pid: 12)),
            ])
        #expect(
            lifecycle.handle(.timerFired(.stop(process: "adapter", pid: 13)), at: time(13)) == [],
            "a stop timer that fires late")
    }

    @Test func whatWaitsToRestartStopsAtOnceAndItsRestartIsCancelled() {
        var lifecycle = Self.running()
        _ = lifecycle.handle(.exited(process: "reducers", pid: 12, status: .code(1)), at: time(5))
        let stop = lifecycle.handle(.stop, at: time(5.1))
        #expect(
            stop == [
                .cancelTimer(.restart(process: "reducers", restart: 1)),
                .term(13), .scheduleTimer(after: .seconds(10), timer: .stop(process: "adapter", pid: 13)),
            ])
        #expect(phase(lifecycle, "reducers") == .stopped)
        #expect(lifecycle.handle(.timerFired(.restart(process: "reducers", restart: 1)), at: time(5.5)) == [])
        let adapter = lifecycle.handle(.exited(process: "adapter", pid: 13, status: .signal(SIGTERM)), at: time(5.6))
        #expect(
            adapter.suffix(2) == [
                .term(11), .scheduleTimer(after: .seconds(10), timer: .stop(process: "server", pid: 11)),
            ],
            "the server next: the reducers are stopped already")
        _ = lifecycle.handle(.exited(process: "server", pid: 11, status: .signal(SIGTERM)), at: time(5.7))
        let bus = Self.busTurn(&lifecycle, drainedAt: 5.8).busExit
        #expect(bus.suffix(2) == [.say("stopped 3 processes"), .deploymentStopped])
    }

    @Test func whenTheDrainTimesOutTheBusIsStoppedAnyway() {
        var lifecycle = Self.running()
        let actions = Self.stoppedUpToTheBus(&lifecycle)
        #expect(actions.suffix(2) == [.drainEvents, .scheduleTimer(after: .seconds(3), timer: .drain)])
        let timedOut = lifecycle.handle(.timerFired(.drain), at: time(14))
        #expect(timedOut == [.term(10), .scheduleTimer(after: .seconds(10), timer: .stop(process: "bus", pid: 10))])
        #expect(lifecycle.handle(.eventsDrained, at: time(14.5)) == [], "drained too late")
        #expect(lifecycle.handle(.timerFired(.drain), at: time(14.5)) == [])
        let bus = lifecycle.handle(.exited(process: "bus", pid: 10, status: .signal(SIGTERM)), at: time(15))
        #expect(bus.suffix(2) == [.say("stopped 4 processes"), .deploymentStopped])
    }

    @Test func aBusThatExitsWhileEventsDrainEndsTheDrainAndTheStop() {
        var lifecycle = Self.running()
        _ = Self.stoppedUpToTheBus(&lifecycle)
        let bus = lifecycle.handle(.exited(process: "bus", pid: 10, status: .code(1)), at: time(12))
        #expect(
            bus == [
                .say("bus (pid 10) ended with exit code 1; stopped", process: "bus"),
                .exited("bus", pid: 10, .code(1), "stopped"),
                .cancelTimer(.drain),
                .say("stopped 4 processes"),
                .deploymentStopped,
            ])
        #expect(lifecycle.handle(.eventsDrained, at: time(12.1)) == [])
    }

    @Test func aStopWhileALaunchIsUnderWayWaitsForItsPidToTerminateIt() {
        var lifecycle = Self.running()
        _ = lifecycle.handle(.exited(process: "reducers", pid: 12, status: .code(1)), at: time(5))
        #expect(
            lifecycle.handle(.timerFired(.restart(process: "reducers", restart: 1)), at: time(5.5)) == [
                .spawn(process: "reducers", arguments: Self.reducersArguments)
            ])
        _ = lifecycle.handle(.stop, at: time(5.6))
        let adapter = lifecycle.handle(.exited(process: "adapter", pid: 13, status: .signal(SIGTERM)), at: time(5.7))
        #expect(
            adapter == [
                .cancelTimer(.stop(process: "adapter", pid: 13)),
                .say("adapter (pid 13) ended by signal SIGTERM (15); stopped", process: "adapter"),
                .exited("adapter", pid: 13, .signal(SIGTERM), "stopped"),
            ],
            "the reducers' turn: no pid to signal yet")
        #expect(phase(lifecycle, "reducers") == .stopping && lifecycle.processes["reducers"]?.isAlive == true)

        let launched = lifecycle.handle(.launched(process: "reducers", pid: 14), at: time(5.8))
        #expect(
            launched == [
                .say("restarted reducers (pid 14): bureau run watchlist", process: "reducers"),
                .started("reducers", pid: 14, Self.reducersArguments, restarts: 1),
                .term(14), .scheduleTimer(after: .seconds(10), timer: .stop(process: "reducers", pid: 14)),
            ],
            "not ready: stopping")
        let exit = lifecycle.handle(.exited(process: "reducers", pid: 14, status: .signal(SIGTERM)), at: time(5.9))
        #expect(
            exit.suffix(2) == [
                .term(11), .scheduleTimer(after: .seconds(10), timer: .stop(process: "server", pid: 11)),
            ])
    }

    @Test func aLaunchUnderWayThatFailsDuringAStopLetsTheStopGoOn() {
        var lifecycle = Self.running()
        _ = lifecycle.handle(.exited(process: "adapter", pid: 13, status: .code(1)), at: time(5))
        _ = lifecycle.handle(.timerFired(.restart(process: "adapter", restart: 1)), at: time(5.5))
        #expect(lifecycle.handle(.stop, at: time(5.6)) == [], "the adapter's turn: its pid is not known yet")
        let failed = lifecycle.handle(.launchFailed(process: "adapter", reason: "fork failed"), at: time(5.7))
        #expect(
            failed == [
                .say("adapter: fork failed", process: "adapter"),
                .term(12), .scheduleTimer(after: .seconds(10), timer: .stop(process: "reducers", pid: 12)),
            ])
    }

    @Test func aStopWhileStartingFailsTheStartAndStopsWhatRuns() {
        var lifecycle = Self.firstWaveLaunched()
        let stop = lifecycle.handle(.stop, at: time(0.6))
        #expect(
            stop == [
                .deploymentFailed(SupervisorError("stopped while starting")),
                .cancelTimer(.readiness(process: "server", pid: 11)),
                .term(11), .scheduleTimer(after: .seconds(10), timer: .stop(process: "server", pid: 11)),
            ])
        #expect(phase(lifecycle, "reducers") == .stopped && phase(lifecycle, "adapter") == .stopped)
        #expect(lifecycle.handle(.stop, at: time(0.7)) == [], "asked twice")
        #expect(
            lifecycle.handle(.reportedReady(process: "server", pid: 11, detail: Self.url), at: time(0.8)) == [],
            "ready too late: nothing starts")
        let server = lifecycle.handle(.exited(process: "server", pid: 11, status: .signal(SIGTERM)), at: time(0.9))
        #expect(server.suffix(2) == [.drainEvents, .scheduleTimer(after: .seconds(3), timer: .drain)])
        let bus = Self.busTurn(&lifecycle, drainedAt: 1).busExit
        #expect(bus.suffix(2) == [.say("stopped 2 processes"), .deploymentStopped])
    }

    @Test func theDeploymentSaysItStoppedExactlyOnce() {
        var lifecycle = Self.running()
        var actions = Self.stoppedUpToTheBus(&lifecycle)
        let busTurn = Self.busTurn(&lifecycle, drainedAt: 12)
        actions += busTurn.drained + busTurn.busExit
        let after: [DeploymentLifecycle.Input] = [
            .stop, .eventsDrained, .timerFired(.drain), .timerFired(.stop(process: "bus", pid: 10)),
            .exited(process: "bus", pid: 10, status: .code(0)), .launchFailed(process: "adapter", reason: "late"),
            .start,
        ]
        for input in after { actions += lifecycle.handle(input, at: time(14)) }
        #expect(actions.filter { $0 == .deploymentStopped }.count == 1)
        #expect(actions.last == .deploymentStopped, "nothing after it")
        #expect(lifecycle.phase == .stopped)
    }

    /// A host whose bus is on another machine: nothing here stops the bus, so the last exits
    /// are only in the supervisor's client; the stop ends once they reached the bus, or their
    /// time ran out.
    @Test func onAHostJoinedToARemoteBusTheLastExitIsDrainedBeforeTheStopEnds() {
        let deployment = Deployment(
            processes: [
                ProcessSpec(name: "reducers", arguments: Self.reducersArguments, reportsReadiness: false),
                ProcessSpec(name: "server", arguments: Self.serverArguments, reportsReadiness: false),
            ],
            remoteBus: Deployment.RemoteBus(url: "tcp://198.51.100.1:7400", serverKeyFile: nil, clientKeyFile: nil))
        for drainedInTime in [true, false] {
            var lifecycle = Self.lifecycle(deployment)
            _ = lifecycle.handle(.start, at: time(0))
            _ = lifecycle.handle(.launched(process: "reducers", pid: 12), at: time(0.1))
            _ = lifecycle.handle(.launched(process: "server", pid: 11), at: time(0.1))
            #expect(lifecycle.phase == .running)
            _ = lifecycle.handle(.stop, at: time(1))
            _ = lifecycle.handle(.exited(process: "server", pid: 11, status: .signal(SIGTERM)), at: time(1.1))
            let last = lifecycle.handle(
                .exited(process: "reducers", pid: 12, status: .signal(SIGTERM)), at: time(1.2))
            #expect(
                last == [
                    .cancelTimer(.stop(process: "reducers", pid: 12)),
                    .say("reducers (pid 12) ended by signal SIGTERM (15); stopped", process: "reducers"),
                    .exited("reducers", pid: 12, .signal(SIGTERM), "stopped"),
                    .drainEvents, .scheduleTimer(after: DeploymentLifecycle.drainTimeout, timer: .drain),
                ],
                "its exit is published before the drain begins, so the drain waits for it")
            #expect(lifecycle.handle(.stop, at: time(1.3)) == [], "asked again while draining")
            let end =
                drainedInTime
                ? lifecycle.handle(.eventsDrained, at: time(1.4))
                : lifecycle.handle(.timerFired(.drain), at: time(4.2))
            #expect(
                end == (drainedInTime ? [.cancelTimer(.drain)] : [])
                    + [.say("stopped 2 processes"), .deploymentStopped])
            #expect(lifecycle.phase == .stopped)
            #expect(
                lifecycle.handle(.eventsDrained, at: time(5)) == []
                    && lifecycle.handle(.timerFired(.drain), at: time(5)) == [])
        }
    }

    @Test func aStopBeforeTheStartEndsAtOnce() {
        var lifecycle = Self.lifecycle()
        #expect(lifecycle.handle(.stop, at: time(0)) == [.deploymentStopped])
        #expect(lifecycle.inStartOrder.allSatisfy { $0.phase == .stopped })
        #expect(lifecycle.handle(.start, at: time(1)) == [], "a stopped deployment does not start")
    }

    // MARK: Children nobody asked for

    @Test func aChildNobodyAskedForIsTerminatedAndChangesNothing() {
        var lifecycle = Self.running()
        let before = lifecycle
        #expect(lifecycle.handle(.launched(process: "ghost", pid: 99), at: time(5)) == [.term(99)])
        #expect(lifecycle.handle(.launched(process: "adapter", pid: 98), at: time(5)) == [.term(98)], "not launching")
        #expect(lifecycle.handle(.reportedReady(process: "ghost", pid: 99, detail: "x"), at: time(5)) == [])
        #expect(lifecycle.handle(.exited(process: "ghost", pid: 99, status: .code(1)), at: time(5)) == [])
        #expect(lifecycle.handle(.exited(process: "adapter", pid: 98, status: .code(1)), at: time(5)) == [])
        #expect(lifecycle.handle(.launchFailed(process: "ghost", reason: "x"), at: time(5)) == [])
        #expect(lifecycle.handle(.timerFired(.restart(process: "ghost", restart: 1)), at: time(5)) == [])
        #expect(lifecycle == before)
    }
}
