import Guards
import Testing

@testable import Supervisor

#if canImport(Glibc)
    import Glibc
#endif

/// One process's lifecycle, without a process: each input, and every action it returns.
struct ProcessLifecycleTests {
    static let arguments = ["run", "watchlist"]

    static func spec(
        reportsReadiness: Bool = true, readyTimeout: Duration = .seconds(60), restart: RestartPolicy = RestartPolicy()
    ) -> ProcessSpec {
        ProcessSpec(
            name: "worker", arguments: arguments, reportsReadiness: reportsReadiness, readyTimeout: readyTimeout,
            restart: restart)
    }

    /// A process launched as `pid` at `launchedAt`, and ready if `ready`.
    static func running(
        _ spec: ProcessSpec = spec(), pid: pid_t = 100, at launchedAt: Double = 0, ready: Bool = true
    ) -> ProcessLifecycle {
        var process = ProcessLifecycle(spec: spec, logPath: "/data/logs/worker.log")
        _ = process.launch(arguments: arguments)
        _ = process.launched(pid: pid, at: time(launchedAt))
        if ready { _ = process.reportedReady(pid: pid, detail: "") }
        return process
    }

    /// `process` failed (exit code 1) `times` times, each after running `ran` seconds, and was
    /// started again after each failure that did not make it crash-loop; returns the delays.
    static func fail(_ process: inout ProcessLifecycle, times: Int, ran: Double = 0.1) -> [Duration] {
        var delays: [Duration] = []
        var clock = 0.0
        for _ in 0..<times {
            guard let pid = process.pid else { break }
            clock += ran
            for action in process.exited(pid: pid, status: .code(1), at: time(clock), arguments: arguments) {
                guard case .scheduleTimer(let delay, .restart(_, let restart)) = action else { continue }
                delays.append(delay)
                clock += delay.inSeconds
                _ = process.restartDue(restart: restart, arguments: arguments)
                _ = process.launched(pid: pid + 1, at: time(clock))
            }
        }
        return delays
    }

    // MARK: Starting

    @Test func aLaunchAsksForASpawnWithTheArgumentsGiven() {
        var process = ProcessLifecycle(spec: Self.spec(), logPath: "/data/logs/worker.log")
        #expect(process.phase == .pending)
        let actions = process.launch(arguments: ["run", "watchlist", "--url", "http://a"])
        #expect(actions == [.spawn(process: "worker", arguments: ["run", "watchlist", "--url", "http://a"])])
        #expect(process.phase == .launching)
        #expect(process.isAlive, "a launch under way is waited for by a stop")
    }

    @Test func aProcessThatReportsReadinessGetsItsReadyTimeoutOnceLaunched() {
        var process = ProcessLifecycle(spec: Self.spec(readyTimeout: .seconds(2)), logPath: "/l")
        _ = process.launch(arguments: Self.arguments)
        let actions = process.launched(pid: 100, at: time(5))
        #expect(
            actions == [
                .say("started worker (pid 100): bureau run watchlist", process: "worker"),
                .started("worker", pid: 100, Self.arguments),
                .scheduleTimer(after: .seconds(2), timer: .readiness(process: "worker", pid: 100)),
            ])
        #expect(process.phase == .starting)
        #expect(process.pid == 100 && process.lastPid == 100)
        #expect(process.startedAt == time(5))
        #expect(process.timer == .readiness(process: "worker", pid: 100))
    }

    @Test func aProcessThatDoesNotReportReadinessIsReadyOnceLaunched() {
        var process = ProcessLifecycle(spec: Self.spec(reportsReadiness: false), logPath: "/l")
        _ = process.launch(arguments: Self.arguments)
        let actions = process.launched(pid: 100, at: time(0))
        #expect(
            actions == [
                .say("started worker (pid 100): bureau run watchlist", process: "worker"),
                .started("worker", pid: 100, Self.arguments),
                .say("worker is ready", process: "worker"),
            ])
        #expect(process.phase == .ready)
        #expect(process.readyDetail == "")
    }

    @Test func aReadyLineCancelsTheReadyTimeoutAndKeepsTheDetail() {
        var process = Self.running(ready: false)
        let actions = process.reportedReady(pid: 100, detail: "http://127.0.0.1:4000")
        #expect(
            actions == [
                .cancelTimer(.readiness(process: "worker", pid: 100)),
                .say("worker is ready at http://127.0.0.1:4000", process: "worker"),
            ])
        #expect(process.phase == .ready)
        #expect(process.readyDetail == "http://127.0.0.1:4000")
        #expect(process.timer == nil)
    }

    @Test func theBusLetsTheSupervisorPublishOnceReady() {
        var bus = ProcessLifecycle(spec: ProcessSpec(name: "bus", arguments: ["bus"]), logPath: "/l")
        _ = bus.launch(arguments: ["bus"])
        _ = bus.launched(pid: 7, at: time(0))
        let actions = bus.reportedReady(pid: 7, detail: "")
        #expect(
            actions == [
                .cancelTimer(.readiness(process: "bus", pid: 7)), .say("bus is ready", process: "bus"), .connectEvents,
            ])
    }

    @Test func aReadyLineFromAnotherChildOrASecondOneChangesNothing() {
        var process = Self.running(ready: false)
        #expect(process.reportedReady(pid: 99, detail: "x") == [])
        #expect(process.phase == .starting)
        _ = process.reportedReady(pid: 100, detail: "first")
        let before = process
        #expect(process.reportedReady(pid: 100, detail: "second") == [])
        #expect(process == before)
    }

    @Test func aChildNobodyAskedForIsTerminated() {
        var process = Self.running()
        let before = process
        #expect(process.launched(pid: 555, at: time(1)) == [.term(555)])
        #expect(process == before)
    }

    @Test func aLaunchThatFailsLeavesTheProcessFailed() {
        var process = ProcessLifecycle(spec: Self.spec(), logPath: "/l")
        _ = process.launch(arguments: Self.arguments)
        let actions = process.launchFailed(reason: "could not start /bin/bureau: No such file or directory")
        let failure = "worker: could not start /bin/bureau: No such file or directory"
        #expect(actions == [.say(failure, process: "worker")])
        #expect(process.phase == .failed)
        #expect(process.failure == failure)
        #expect(!process.isAlive)
        #expect(process.launchFailed(reason: "again") == [], "only the launch asked for can fail")
    }

    @Test func notReadyInTimeAtTheFirstLaunchIsKilledAndFailedAndNotRestarted() {
        var process = Self.running(Self.spec(readyTimeout: .seconds(2)), ready: false)
        let overdue = process.readinessOverdue(pid: 100)
        #expect(overdue == [.kill(100)])
        #expect(process.phase == .failed)
        #expect(process.failure == "worker was not ready within 2 s (ready_timeout_s); see /data/logs/worker.log")
        #expect(process.isAlive, "killed, its exit not seen yet")

        let exit = process.exited(pid: 100, status: .signal(SIGKILL), at: time(2), arguments: Self.arguments)
        let message = "not restarted: worker was not ready within 2 s (ready_timeout_s); see /data/logs/worker.log"
        #expect(
            exit == [
                .say("worker (pid 100) ended by signal SIGKILL (9); \(message)", process: "worker"),
                .exited("worker", pid: 100, .signal(SIGKILL), message),
            ])
        #expect(process.phase == .failed)
        #expect(process.restarts == 0)
    }

    @Test func notReadyInTimeAfterARestartIsKilledAndItsExitCountsAsAFailure() {
        var process = Self.running(Self.spec(readyTimeout: .milliseconds(1500)))
        _ = Self.fail(&process, times: 1)
        #expect(process.phase == .starting && process.pid == 101)
        let overdue = process.readinessOverdue(pid: 101)
        #expect(
            overdue == [
                .say("worker was not ready within 1.5 s (ready_timeout_s); killing it", process: "worker"), .kill(101),
            ])
        #expect(process.phase == .starting, "its exit decides what comes next")
        let exit = process.exited(pid: 101, status: .signal(SIGKILL), at: time(3), arguments: Self.arguments)
        #expect(
            exit == [
                .say(
                    "worker (pid 101) ended by signal SIGKILL (9); restarting in 1000 ms (restart 2 of 5)",
                    process: "worker"),
                .exited("worker", pid: 101, .signal(SIGKILL), restarts: 2, "restarting in 1000 ms (restart 2 of 5)"),
                .scheduleTimer(after: .seconds(1), timer: .restart(process: "worker", restart: 2)),
            ])
    }

    @Test func aReadinessTimerForAnotherChildOrAfterReadyChangesNothing() {
        var starting = Self.running(ready: false)
        #expect(starting.readinessOverdue(pid: 99) == [])
        var ready = Self.running()
        #expect(ready.readinessOverdue(pid: 100) == [])
        #expect(ready.phase == .ready)
    }

    // MARK: Exits and restarts

    @Test func aFailureRestartsAfterTheInitialBackoff() {
        var process = Self.running(ready: false)
        let actions = process.exited(pid: 100, status: .code(1), at: time(0.2), arguments: Self.arguments)
        #expect(
            actions == [
                .cancelTimer(.readiness(process: "worker", pid: 100)),
                .say(
                    "worker (pid 100) ended with exit code 1; restarting in 500 ms (restart 1 of 5)", process: "worker"),
                .exited("worker", pid: 100, .code(1), restarts: 1, "restarting in 500 ms (restart 1 of 5)"),
                .scheduleTimer(after: .milliseconds(500), timer: .restart(process: "worker", restart: 1)),
            ])
        #expect(process.phase == .restarting)
        #expect(process.restarts == 1 && process.failuresInARow == 1)
        #expect(process.pid == nil && process.lastPid == 100 && process.startedAt == nil)
        #expect(!process.isAlive)
    }

    @Test func theBackoffPassingStartsItAgainAsARestart() {
        var process = Self.running()
        _ = process.exited(pid: 100, status: .code(1), at: time(1), arguments: Self.arguments)
        let due = process.restartDue(restart: 1, arguments: ["run", "watchlist", "--new"])
        #expect(due == [.spawn(process: "worker", arguments: ["run", "watchlist", "--new"])])
        #expect(process.phase == .launching && process.timer == nil)
        let launched = process.launched(pid: 101, at: time(1.5))
        #expect(
            launched == [
                .say("restarted worker (pid 101): bureau run watchlist --new", process: "worker"),
                .started("worker", pid: 101, ["run", "watchlist", "--new"], restarts: 1),
                .scheduleTimer(after: .seconds(60), timer: .readiness(process: "worker", pid: 101)),
            ])
    }

    @Test func aRestartTimerThatIsNotTheCurrentOneChangesNothing() {
        var process = Self.running()
        _ = process.exited(pid: 100, status: .code(1), at: time(1), arguments: Self.arguments)
        #expect(process.restartDue(restart: 7, arguments: Self.arguments) == [])
        #expect(process.phase == .restarting)
        var ready = Self.running()
        #expect(ready.restartDue(restart: 0, arguments: Self.arguments) == [])
    }

    @Test func theBackoffDoublesFromTheInitialAndIsCappedAtTheMaximum() {
        let policy = RestartPolicy(
            initialBackoff: .milliseconds(50), maximumBackoff: .milliseconds(200), maximumRestarts: 10)
        var process = Self.running(Self.spec(restart: policy))
        let delays = Self.fail(&process, times: 6)
        #expect(delays.map(\.inMilliseconds) == [50, 100, 200, 200, 200, 200])
        #expect(process.restarts == 6 && process.failuresInARow == 6)
    }

    @Test func afterMaxRestartsFailuresInARowItIsCrashLoopingAndNotRestarted() {
        let policy = RestartPolicy(
            initialBackoff: .milliseconds(50), maximumBackoff: .milliseconds(200), maximumRestarts: 4)
        var process = Self.running(Self.spec(restart: policy))
        #expect(Self.fail(&process, times: 4).count == 4)
        let pid = process.pid ?? 0
        let actions = process.exited(pid: pid, status: .code(3), at: time(10), arguments: Self.arguments)
        let message =
            "crash-looping: failed 5 times in a row; not restarting (max_restarts 4); see /data/logs/worker.log"
        #expect(
            actions == [
                .cancelTimer(.readiness(process: "worker", pid: pid)),
                .say("worker (pid \(pid)) ended with exit code 3; \(message)", process: "worker"),
                .exited("worker", pid: pid, .code(3), restarts: 4, message),
                .reportCrashLoop(process: "worker", failures: 5),
            ])
        #expect(process.phase == .crashLooping)
        #expect(process.restarts == 4, "four restarts happened; the fifth failure is not a restart")
        #expect(process.timer == nil && !process.isAlive)
    }

    @Test func maxRestartsZeroCrashLoopsAtTheFirstFailure() {
        var process = Self.running(Self.spec(restart: RestartPolicy(maximumRestarts: 0)))
        let actions = process.exited(pid: 100, status: .code(1), at: time(1), arguments: Self.arguments)
        #expect(actions.contains(.reportCrashLoop(process: "worker", failures: 1)))
        #expect(process.phase == .crashLooping && process.restarts == 0)
    }

    @Test func aProcessThatRanResetAfterBeforeFailingCountsAfresh() {
        let policy = RestartPolicy(initialBackoff: .milliseconds(50), maximumRestarts: 1, resetAfter: .seconds(60))
        var process = Self.running(Self.spec(restart: policy), at: 0)
        // Failed after exactly reset_after_s: the first failure in a row, again and again.
        for round in 0..<4 {
            let pid = process.pid ?? 0
            let startedAt = process.startedAt ?? time(0)
            let actions = process.exited(
                pid: pid, status: .code(1), at: startedAt + .seconds(60), arguments: Self.arguments)
            #expect(
                actions.contains(
                    .say(
                        "worker (pid \(pid)) ended with exit code 1; restarting in 50 ms (restart 1 of 1)",
                        process: "worker")),
                "round \(round)")
            #expect(process.failuresInARow == 1)
            _ = process.restartDue(restart: process.restarts, arguments: Self.arguments)
            _ = process.launched(pid: pid + 1, at: startedAt + .seconds(61))
        }
        #expect(process.restarts == 4, "every restart is counted, even when the failures are not")
        // A moment short of it: the second failure in a row, past max_restarts 1.
        let pid = process.pid ?? 0
        let startedAt = process.startedAt ?? time(0)
        let short = process.exited(
            pid: pid, status: .code(1), at: startedAt + .milliseconds(59_999), arguments: Self.arguments)
        #expect(short.contains(.reportCrashLoop(process: "worker", failures: 2)))
        #expect(process.phase == .crashLooping)
    }

    @Test func aKilledProcessFailedAndItsSignalIsPublished() {
        var process = Self.running()
        let actions = process.exited(pid: 100, status: .signal(SIGKILL), at: time(1), arguments: Self.arguments)
        #expect(
            actions == [
                .say(
                    "worker (pid 100) ended by signal SIGKILL (9); restarting in 500 ms (restart 1 of 5)",
                    process: "worker"),
                .exited("worker", pid: 100, .signal(SIGKILL), restarts: 1, "restarting in 500 ms (restart 1 of 5)"),
                .scheduleTimer(after: .milliseconds(500), timer: .restart(process: "worker", restart: 1)),
            ])
    }

    @Test func exitingWithCodeZeroCompletesAndIsNotRestarted() {
        var process = Self.running()
        let actions = process.exited(pid: 100, status: .code(0), at: time(1), arguments: Self.arguments)
        #expect(
            actions == [
                .say("worker (pid 100) ended with exit code 0; completed; not restarted", process: "worker"),
                .exited("worker", pid: 100, .code(0), "completed; not restarted"),
            ])
        #expect(process.phase == .exited && process.restarts == 0 && process.failuresInARow == 0)
    }

    @Test func theExitOfAnotherChildChangesNothing() {
        var process = Self.running()
        let before = process
        #expect(process.exited(pid: 42, status: .code(1), at: time(1), arguments: Self.arguments) == [])
        #expect(process == before)
    }

    // MARK: Re-planning

    @Test func aReplanStopsItToStartAgainAtOnceWithoutCountingAFailure() {
        var process = Self.running(ready: false)
        let replan = process.replan(because: "server now reports http://b")
        #expect(
            replan == [
                .cancelTimer(.readiness(process: "worker", pid: 100)),
                .say("restarting worker: server now reports http://b", process: "worker"),
                .term(100),
            ])
        #expect(process.phase == .replanning)
        #expect(process.reportedReady(pid: 100, detail: "") == [], "a child being replaced is not ready")
        let exit = process.exited(pid: 100, status: .signal(SIGTERM), at: time(1), arguments: ["run", "b"])
        #expect(
            exit == [
                .say("worker (pid 100) ended by signal SIGTERM (15); restarting now", process: "worker"),
                .exited("worker", pid: 100, .signal(SIGTERM), "restarting now"),
                .spawn(process: "worker", arguments: ["run", "b"]),
            ])
        #expect(process.phase == .launching)
        #expect(process.restarts == 0 && process.failuresInARow == 0)
    }

    @Test func onlyARunningChildIsReplanned() {
        var pending = ProcessLifecycle(spec: Self.spec(), logPath: "/l")
        #expect(pending.replan(because: "x") == [])
        var restarting = Self.running()
        _ = restarting.exited(pid: 100, status: .code(1), at: time(1), arguments: Self.arguments)
        #expect(restarting.replan(because: "x") == [])
        #expect(restarting.phase == .restarting)
    }

    // MARK: Stopping

    @Test func aHaltStopsWhatIsNotRunningAndCancelsAPendingRestart() {
        var pending = ProcessLifecycle(spec: Self.spec(), logPath: "/l")
        #expect(pending.halt() == [])
        #expect(pending.phase == .stopped)

        var restarting = Self.running()
        _ = restarting.exited(pid: 100, status: .code(1), at: time(1), arguments: Self.arguments)
        #expect(restarting.halt() == [.cancelTimer(.restart(process: "worker", restart: 1))])
        #expect(restarting.phase == .stopped)
        #expect(restarting.restartDue(restart: 1, arguments: Self.arguments) == [], "a restart that fires late")

        var starting = Self.running(ready: false)
        #expect(starting.halt() == [.cancelTimer(.readiness(process: "worker", pid: 100))])
        #expect(starting.phase == .stopping)
        #expect(starting.readinessOverdue(pid: 100) == [])

        var crashed = Self.running(Self.spec(restart: RestartPolicy(maximumRestarts: 0)))
        _ = crashed.exited(pid: 100, status: .code(1), at: time(1), arguments: Self.arguments)
        #expect(crashed.halt() == [])
        #expect(crashed.phase == .crashLooping)
    }

    @Test func itsTurnToStopSendsSIGTERMThenSIGKILLAfterTheStopTimeout() {
        var process = Self.running()
        _ = process.halt()
        let terminate = process.terminate(timeout: .seconds(10))
        #expect(
            terminate == [.term(100), .scheduleTimer(after: .seconds(10), timer: .stop(process: "worker", pid: 100))])
        let overdue = process.stopOverdue(pid: 100, timeout: .seconds(10))
        #expect(
            overdue == [
                .say("worker did not stop within 10000 ms of SIGTERM; sending SIGKILL", process: "worker"), .kill(100),
            ])
        #expect(process.stopOverdue(pid: 100, timeout: .seconds(10)) == [], "SIGKILL once")
        let exit = process.exited(pid: 100, status: .signal(SIGKILL), at: time(11), arguments: Self.arguments)
        #expect(
            exit == [
                .say("worker (pid 100) ended by signal SIGKILL (9); stopped", process: "worker"),
                .exited("worker", pid: 100, .signal(SIGKILL), "stopped"),
            ])
        #expect(process.phase == .stopped)
    }

    @Test func aChildThatExitsAfterSIGTERMIsStoppedAndItsTimerCancelled() {
        var process = Self.running()
        _ = process.halt()
        _ = process.terminate(timeout: .seconds(10))
        let exit = process.exited(pid: 100, status: .code(1), at: time(1), arguments: Self.arguments)
        #expect(
            exit == [
                .cancelTimer(.stop(process: "worker", pid: 100)),
                .say("worker (pid 100) ended with exit code 1; stopped", process: "worker"),
                .exited("worker", pid: 100, .code(1), "stopped"),
            ])
        #expect(process.phase == .stopped && process.restarts == 0)
    }

    @Test func aLaunchUnderWayWhenStoppingWaitsForItsPid() {
        var process = ProcessLifecycle(spec: Self.spec(), logPath: "/l")
        _ = process.launch(arguments: Self.arguments)
        #expect(process.halt() == [])
        #expect(process.phase == .stopping)
        #expect(process.terminate(timeout: .seconds(1)) == [], "no pid to signal yet")
        let launched = process.launched(pid: 100, at: time(0))
        #expect(
            launched == [
                .say("started worker (pid 100): bureau run watchlist", process: "worker"),
                .started("worker", pid: 100, Self.arguments),
            ])
        #expect(process.phase == .stopping && process.timer == nil)
        #expect(process.terminate(timeout: .seconds(1)).first == .term(100))
    }

    @Test func durationsReadInSecondsAsAPersonWritesThem() {
        #expect(Duration.seconds(2).secondsText() == "2")
        #expect(Duration.milliseconds(500).secondsText() == "0.5")
        #expect(Duration.milliseconds(2250).secondsText() == "2.25")
        #expect(Duration.milliseconds(1250).secondsText(tenths: true) == "1.3")
        #expect(Duration.seconds(10).secondsText(tenths: true) == "10.0")
    }
}
