import BureauSchemas
import Bus
import BusTesting
import EventLog
import Foundation
import TestSupport
import Testing
import ZeroMQBus

#if canImport(Glibc)
    import Glibc
#endif

/// `bureau up` as a person runs it: the default deployment, crashes, and every way to stop it.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct SupervisorProcessTests {
    struct Row: Decodable {
        var name: String
        var pid: Int32
        var state: String
        var restarts: Int
    }

    static func processes(_ bus: BusProcess) async throws -> [Row] {
        let result = try await bus.run(["ps", "--json"])
        try #require(result.code == 0, "bureau ps: \(result.err)")
        return try JSONDecoder().decode([Row].self, from: Data(result.out.utf8))
    }

    static func alive(_ pid: Int32) -> Bool {
        // A zombie no longer runs: check its state, not only that it exists.
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        return !status.contains(") Z ")
    }

    /// Waits (bounded) until none of `pids` runs.
    static func allGone(_ pids: [Int32], within timeout: Duration = .seconds(20)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if !pids.contains(where: alive) { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// Starts the default deployment without the front-end; returns once every process is ready.
    static func up(_ directory: TemporaryDirectory, bus: BusProcess) async throws -> (ChildProcess, Duration) {
        let began = ContinuousClock.now
        let supervisor = try ChildProcess(
            BureauExecutable.path, ["up", "--no-tui", "--data", bus.location.dataDirectory], directory: directory.path,
            name: "up", readiness: true)
        try await supervisor.waitUntilReady(timeout: .seconds(120))
        return (supervisor, ContinuousClock.now - began)
    }

    static func pairs(_ bus: BusProcess) async throws -> String {
        try await bus.run(["show", "watchlist"]).out
    }

    @Test func theDefaultDeploymentRunsRestartsCrashesAndStopsCleanlyOnSIGTERM() async throws {
        let directory = try TemporaryDirectory("up")
        let bus = BusProcess(directory: directory.path)
        let (supervisor, took) = try await Self.up(directory, bus: bus)
        defer { supervisor.signal(SIGKILL) }
        print("bureau up --no-tui: every process ready in \(took)")
        let rows = try await Self.processes(bus)
        #expect(
            rows.map(\.name).sorted() == [
                "booking-adapter", "booking-server", "bus", "rates-adapter", "rates-server", "reducers",
            ])
        #expect(rows.allSatisfy { $0.state == "ready" })
        let observer = try ZeroMQBusClient(
            location: bus.location, options: .init(process: "test"), logger: TestLogging.logger("t"))
        defer { observer.close() }

        // The file's `setup:` commands, sent once every process is ready, in order: the
        // commission on each currency the bureau sells, set in the log.
        // (A filter is by prefix: the exact type, not the requests, which share its name's start.)
        let setType = Bureau_Reservations_CommissionRateSet.protoMessageName
        let commissions = try await observer.collect(.types([setType]), count: 4, timeout: .seconds(60)) {
            $0.type == setType
        }
        let set = try commissions.compactMap { try $0.payload(as: Bureau_Reservations_CommissionRateSet.self) }
        #expect(
            set.map { "\($0.currency)=\($0.rate)" } == ["USD=0.005", "GBP=0.0075", "EUR=0.005", "JPY=0.01"])

        // Rates first: a pair must be quoted before it can be watched.
        let rates = try await observer.collect(
            .types([Bureau_Rates_RatesPublished.protoMessageName]), count: 1, timeout: .seconds(60))
        try #require(rates.count == 1)
        let added = try await bus.run(["send", "bureau://watchlist/add?base=EUR&quote=USD"])
        #expect(added.code == 0, "\(added.out) \(added.err)")
        #expect(added.out.contains("PairAdded"))

        // `bureau kill` names what it cannot signal, and says what it did.
        let unknown = try await bus.run(["kill", "reducer", "--signal", "KILL"])
        #expect(unknown.code == 1 && unknown.err.contains("no process reducer; its processes: bus,"), "\(unknown.err)")
        let badSignal = try await bus.run(["kill", "reducers", "--signal", "SIGFOO"])
        #expect(badSignal.code == 64 && badSignal.err.contains("--signal SIGFOO is not a signal"), "\(badSignal.err)")

        // kill -9 the reducers, by name: restarted, the exit in the log, the state intact.
        let reducers = try #require(rows.first { $0.name == "reducers" })
        let killed = try await bus.run(["kill", "reducers", "--signal", "KILL"])
        #expect(killed.code == 0 && killed.out == "sent SIGKILL to reducers (pid \(reducers.pid))\n", "\(killed)")
        let exits = try await observer.collect(
            .types([Bureau_System_ProcessExited.protoMessageName]), count: 1, timeout: .seconds(30)
        ) { event in (try? event.payload(as: Bureau_System_ProcessExited.self))??.process == "reducers" }
        let exited = try #require(try exits.first?.payload(as: Bureau_System_ProcessExited.self))
        #expect(exited.signal == SIGKILL)
        #expect(exited.message.hasPrefix("restarting in"))
        let restarted = try await observer.collect(
            .types([Bureau_System_ProcessStarted.protoMessageName]), count: 1, timeout: .seconds(30)
        ) { event in (try? event.payload(as: Bureau_System_ProcessStarted.self))??.restarts == 1 }
        #expect(restarted.count == 1)
        let second = try await bus.run(["send", "bureau://watchlist/add?base=EUR&quote=JPY", "--timeout", "30"])
        #expect(second.code == 0, "\(second.out) \(second.err)")
        let duplicate = try await bus.run(["send", "bureau://watchlist/add?base=EUR&quote=USD"])
        #expect(duplicate.code == 1, "the restarted reducer still knows EUR/USD")
        #expect(duplicate.out.contains("DUPLICATE"))
        let watchlist = try await Self.pairs(bus)
        #expect(watchlist.contains("EUR/USD") && watchlist.contains("EUR/JPY"))

        // SIGTERM to the supervisor: every child gone, the log verifies.
        let pids = try await Self.processes(bus).map(\.pid)
        supervisor.signal(SIGTERM)
        #expect(await supervisor.exitCode(within: .seconds(60)) == 0)
        #expect(try await Self.allGone(pids))
        let verify = try await bus.run(["log", "verify"])
        #expect(verify.code == 0, "\(verify.out) \(verify.err)")
    }

    /// A `ProcessExited` in the log, as `bureau log show --json` prints it.
    struct Exit: Equatable, CustomStringConvertible {
        var process: String
        var message: String
        var description: String { "\(process): \(message)" }
    }

    /// Every `ProcessExited` in `bus`'s log, read from its files (the bus may be stopped).
    static func exits(_ bus: BusProcess) async throws -> [Exit] {
        let shown = try await bus.run(["log", "show", "--type", "bureau.system.ProcessExited", "--json"])
        try #require(shown.code == 0, "bureau log show: \(shown.err)")
        return try shown.out.split(separator: "\n").map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let payload = try #require(object["payload"] as? [String: Any], "\(line)")
            return Exit(process: payload["process"] as? String ?? "", message: payload["message"] as? String ?? "")
        }
    }

    /// No terminal (standard input /dev/null, output a file, as under a service manager or
    /// CI): `up` says so and runs as with --no-tui instead of stopping everything once the
    /// front-end cannot open. `bureau down` then stops it, and every process it started has
    /// its last `ProcessExited` in the log, published before the bus went: all but the bus,
    /// whose own exit comes after its log closed.
    @Test func upWithoutATerminalRunsAsNoTuiAndDownLeavesEveryLastExitInTheLog() async throws {
        let directory = try TemporaryDirectory("up-no-terminal")
        let bus = BusProcess(directory: directory.path)
        let supervisor = try ChildProcess(
            BureauExecutable.path, ["up", "--data", bus.location.dataDirectory], directory: directory.path,
            name: "up", readiness: true)
        defer { supervisor.signal(SIGKILL) }
        try await supervisor.waitUntilReady(timeout: .seconds(120))
        #expect(
            supervisor.standardError.contains(
                "standard input or output is not a terminal, so the front-end cannot open; running as --no-tui"),
            "\(supervisor.standardError)")
        #expect(
            supervisor.standardOutput.range(of: "\nrates-server +\\| ", options: .regularExpression) != nil,
            "the processes' output is printed here")
        let rows = try await Self.processes(bus)
        #expect(rows.count == 6 && rows.allSatisfy { $0.state == "ready" }, "\(rows)")

        let down = try await bus.run(["down"])
        #expect(down.code == 0, "\(down.err)")
        #expect(await supervisor.exitCode(within: .seconds(60)) == 0, "\(supervisor.standardError)")
        let exits = try await Self.exits(bus)
        let started = rows.map(\.name).filter { $0 != "bus" }.sorted()
        #expect(exits.map(\.process).sorted() == started, "one exit each, the bus's aside: \(exits)")
        #expect(exits.allSatisfy { $0.message == "stopped" }, "\(exits)")
        // Shown as exit codes and signals, never as the raw status waitpid gives.
        let said = Files.read(bus.location.processLogDirectory + "/supervisor.log") ?? ""
        for name in started + ["bus"] {
            let line =
                "\(name) \\(pid [0-9]+\\) ended (with exit code [0-9]+|by signal SIG[A-Z]+ \\([0-9]+\\)); stopped"
            #expect(said.range(of: line, options: .regularExpression) != nil, "\(name): \(said)")
        }
        #expect(!said.contains("status"), "\(said)")
    }

    @Test func noChildSurvivesASupervisorKilledWithSIGKILL() async throws {
        let directory = try TemporaryDirectory("up-kill")
        let bus = BusProcess(directory: directory.path)
        let (supervisor, _) = try await Self.up(directory, bus: bus)
        let pids = try await Self.processes(bus).map(\.pid)
        #expect(pids.count == 6 && pids.allSatisfy(Self.alive))
        supervisor.signal(SIGKILL)
        _ = await supervisor.exitStatus()
        #expect(try await Self.allGone(pids))
        let verify = try await bus.run(["log", "verify"])
        #expect(verify.code == 0, "\(verify.out) \(verify.err)")
    }

    /// `bureau up --no-tui` on `deployment`, written to `bureau.yaml` in `directory`, with its
    /// data beside it.
    static func up(_ deployment: String, in directory: TemporaryDirectory) throws -> ChildProcess {
        let file = directory.file("bureau.yaml")
        try deployment.write(toFile: file, atomically: true, encoding: .utf8)
        return try ChildProcess(
            BureauExecutable.path, ["up", "--no-tui", "--file", file, "--data", directory.file("data")],
            directory: directory.path, name: "up")
    }

    /// Stops `supervisor` with SIGTERM; returns its exit code, nil if it has not exited within 30 s.
    static func stop(_ supervisor: ChildProcess) async -> Int32? {
        supervisor.signal(SIGTERM)
        return await supervisor.exitCode(within: .seconds(30))
    }

    /// Reads the supervisor's output until `done` holds, it exits, or a minute passes (the
    /// output is a file the child writes; there is no event to await).
    static func watch(_ supervisor: ChildProcess, until done: (String) -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while !done(supervisor.standardOutput), ContinuousClock.now < deadline, supervisor.isRunning {
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    @Test func aProcessThatAlwaysFailsBacksOffThenIsReportedAsCrashLooping() async throws {
        let directory = try TemporaryDirectory("up-fail")
        let supervisor = try Self.up(
            """
            processes:
              broken:
                command: send not-a-url
                ready: false
            restart:
              initial_backoff_ms: 50
              max_backoff_ms: 200
              max_restarts: 4
            """,
            in: directory)
        defer { supervisor.signal(SIGKILL) }
        try await Self.watch(supervisor) { $0.contains("crash-looping") }
        let output = supervisor.standardOutput
        let delays = output.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "restarting in ") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != " " })
        }
        #expect(delays == ["50", "100", "200", "200"], "doubling, capped at 200 ms: \(output)")
        #expect(output.contains("broken"))
        #expect(output.contains("crash-looping: failed 5 times in a row; not restarting (max_restarts 4)"))
        #expect(await Self.stop(supervisor) == 0)
    }

    @Test func aProcessLeftCrashLoopingIsAnErrorRaisedInTheLog() async throws {
        let directory = try TemporaryDirectory("up-fail-bus")
        let bus = BusProcess(directory: directory.path)
        let supervisor = try Self.up(
            """
            processes:
              bus:
                command: bus
              broken:
                command: send not-a-url
                ready: false
                depends_on: [bus]
            restart:
              initial_backoff_ms: 50
              max_backoff_ms: 50
              max_restarts: 2
            """,
            in: directory)
        defer { supervisor.signal(SIGKILL) }
        try await Self.watch(supervisor) { $0.contains("crash-looping") }
        #expect(await Self.stop(supervisor) == 0)

        let events = try bus.records().map { try StoredEvent(envelopeBytes: $0.body) }
        let errors = try events.compactMap { try $0.payload(as: Bureau_System_ErrorRaised.self) }
        #expect(errors.count == 1, "\(errors)")
        let raised = try #require(errors.first)
        #expect(raised.code == "crash-looping")
        #expect(raised.module == "supervisor")
        #expect(raised.message.hasPrefix("broken failed 3 times in a row and is no longer restarted; see "))
        #expect(raised.message.hasSuffix("/broken.log"))
        let exits = try events.compactMap { try $0.payload(as: Bureau_System_ProcessExited.self) }
        #expect(exits.filter { $0.process == "broken" }.count == 3, "each failure is in the log too")
    }

    @Test func aProcessThatRanLongEnoughBeforeFailingStartsCountingAfresh() async throws {
        let directory = try TemporaryDirectory("up-reset")
        // `send` with no bus waits 0.6 s for an answer, then fails: longer than reset_after_s.
        let supervisor = try Self.up(
            """
            processes:
              flaky:
                command: [send, "bureau://converter/amount?value=1&currency=EUR", --timeout, "0.6"]
                ready: false
            restart:
              initial_backoff_ms: 50
              max_restarts: 1
              reset_after_s: 0.3
            """,
            in: directory)
        defer { supervisor.signal(SIGKILL) }
        func restarts() -> Int { supervisor.standardOutput.components(separatedBy: "restarting in 50 ms").count - 1 }
        try await Self.watch(supervisor) { _ in restarts() >= 4 }
        let output = supervisor.standardOutput
        #expect(restarts() >= 4, "past max_restarts 1, each failure the first in a row: \(output)")
        #expect(output.contains("restart 1 of 1"))
        #expect(!output.contains("crash-looping"), "\(output)")
        #expect(await Self.stop(supervisor) == 0)
    }

    @Test func aDependencyThatNeverGetsReadyTimesOutWithAClearMessage() async throws {
        let directory = try TemporaryDirectory("up-stuck")
        // No bus: the reducers never catch up.
        let supervisor = try Self.up(
            """
            processes:
              reducers:
                command: run watchlist
                ready_timeout_s: 2
              after:
                command: run converter
                depends_on: [reducers]
            """,
            in: directory)
        defer { supervisor.signal(SIGKILL) }
        #expect(await supervisor.exitCode(within: .seconds(60)) == 1)
        // Failed once in a full run as "kept failing": every launch ended before its 2 s. Most
        // likely what ended a bus with SIGTERM while starting in another run: a supervisor whose
        // lifeline was fd 3 handed its children the readiness pipe as their lifeline (fixed in
        // ProcessSpawn; ProcessSpawnTests). Should it fail again, it says what the child said.
        let log = Files.read(directory.file("data/logs/reducers.log")) ?? "none"
        #expect(
            supervisor.standardError.contains("reducers was not ready within 2 s (ready_timeout_s)"),
            "\(supervisor.standardOutput)\n\(supervisor.standardError)\nthe reducers' log: \(log)")
        #expect(!supervisor.standardOutput.contains("started after (pid"), "what depends on it never starts")
    }

    @Test func aBrokenDeploymentFileIsRefusedNamingTheLineAndField() async throws {
        let directory = try TemporaryDirectory("up-bad")
        let file = directory.file("bureau.yaml")
        try "processes:\n  bus:\n    command: bus\n    depend_on: [x]\n".write(
            toFile: file, atomically: true, encoding: .utf8)
        let bus = BusProcess(directory: directory.path)
        let result = try await bus.run(["up", "--no-tui", "--file", file])
        #expect(result.code == 64)
        #expect(result.err.contains("bureau.yaml:4: processes.bus.depend_on: unknown field"))
    }

    @Test func psAndDownWithoutADeploymentSaySo() async throws {
        let directory = try TemporaryDirectory("up-none")
        let bus = BusProcess(directory: directory.path)
        let result = try await bus.run(["ps"])
        #expect(result.code == 1)
        #expect(result.err.contains("no deployment is running"))
    }
}
