import BureauSchemas
import Bus
import BusTesting
import EventLog
import Foundation
import TestServers
import TestSupport
import Testing
import ZeroMQBus

#if canImport(Glibc)
    import Glibc
#endif

/// A deployment spread over hosts: network namespaces joined by veth pairs to a bridge
/// (198.51.100.0/24), one for the bus, one for the reducers, one for the adapters and their
/// servers, each under its own `bureau up`; this test is the front-end/CLI host on the bridge.
/// Everything crosses CURVE TCP. Skipped, saying why, where namespaces cannot be made.
@Suite(
    .serialized, .timeLimit(.minutes(8)), .requiresNetworkHosts,
    // Makes and removes namespaces and links with `ip`, waiting for each: off the cooperative pool.
    .ownThreads)
struct HostsTests {
    static let busURL = "tcp://198.51.100.1:7400"
    static let restart = """
        restart:
          initial_backoff_ms: 100
          max_backoff_ms: 500
          max_restarts: 1000
        """

    /// The hosts, their keys and deployment files, and their supervisors once started.
    final class Deployment: @unchecked Sendable {
        let directory: TemporaryDirectory
        let network: NetworkHosts
        private(set) var supervisors: [String: ChildProcess] = [:]

        init() throws {
            directory = try TemporaryDirectory("hosts")
            network = try NetworkHosts(["bus", "reducers", "adapters"])
        }

        func data(_ host: String) -> String { directory.file("\(host)-data") }

        /// Keys for the bus and each client host (the test itself is `cli`), the allow-list, and
        /// each host's deployment file.
        func prepare() async throws {
            for stem in ["bus", "reducers", "adapters", "cli"] {
                let keygen = try ChildProcess(
                    BureauExecutable.path, ["keygen", directory.file(stem)], directory: directory.path,
                    name: "keygen-\(stem)")
                #expect(await keygen.exitCode(within: .seconds(30)) == 0)
            }
            let allowed = try ["reducers", "adapters", "cli"].map {
                try #require(Files.read(directory.file("\($0).pub")))
            }
            try Files.write(directory.file("allowed"), allowed.joined())
            let joining = { (host: String) in
                """
                bus:
                  url: \(HostsTests.busURL)
                  server_key: bus.pub
                  client_key: \(host).key
                """
            }
            try Files.write(
                directory.file("bus.yaml"),
                """
                processes:
                  bus:
                    command: bus --heartbeat-ms 200 --listen 198.51.100.1:7400 --curve-secret-file \(directory.file("bus.key")) --allow-keys \(directory.file("allowed"))
                \(HostsTests.restart)
                """)
            try Files.write(
                directory.file("reducers.yaml"),
                """
                \(joining("reducers"))
                processes:
                  reducers:
                    command: run watchlist converter reservations alerts
                \(HostsTests.restart)
                """)
            try Files.write(
                directory.file("adapters.yaml"),
                """
                \(joining("adapters"))
                processes:
                  rates-server:
                    command: serve rates --port 0 --pace 5
                  booking-server:
                    command: serve booking --port 0
                  rates-adapter:
                    command: run rates-adapter --set rates-url=${rates-server.ready}/stats/eurofxref/eurofxref-daily.xml --set poll-ms=200
                    depends_on: [rates-server]
                  booking-adapter:
                    command: run booking-adapter --set booking-url=${booking-server.ready}
                    depends_on: [booking-server]
                \(HostsTests.restart)
                """)
        }

        /// `bureau up` on `host`, in its namespace; returns once every process there is ready.
        func up(_ host: String) async throws {
            let (executable, arguments) = try network.command(
                host,
                [
                    BureauExecutable.path, "up", "--no-tui", "--file", directory.file("\(host).yaml"), "--data",
                    data(host),
                ])
            let supervisor = try ChildProcess(
                executable, arguments, directory: directory.path, name: "up-\(host)", readiness: true)
            supervisors[host] = supervisor
            try await supervisor.waitUntilReady(timeout: .seconds(120))
        }

        /// `bureau ARGUMENTS` here (on the bridge), to its end.
        func run(_ arguments: [String], name: String) async throws -> (code: Int32?, out: String, err: String) {
            try await ChildProcess.bureau(arguments, in: directory.path, name: name)
        }

        /// The processes `bureau ps` lists on `host` that run and are ready.
        func readyProcesses(_ host: String) async throws -> [SupervisorProcessTests.Row] {
            let result = try await run(["ps", "--json", "--data", data(host)], name: "ps-\(host)")
            guard result.code == 0 else { return [] }
            let rows = try JSONDecoder().decode([SupervisorProcessTests.Row].self, from: Data(result.out.utf8))
            return rows.filter { $0.pid > 0 && $0.state == "ready" }
        }

        var cliOptions: [String] {
            [
                "--bus", HostsTests.busURL, "--server-key", directory.file("bus.pub"), "--client-key",
                directory.file("cli.key"),
            ]
        }

        func remoteBus() throws -> RemoteBus {
            try RemoteBus(
                url: HostsTests.busURL, serverKeyFile: directory.file("bus.pub"),
                clientKeyFile: directory.file("cli.key"))
        }

        /// Stops the supervisors, the bus's last, then removes the hosts.
        func stop() async -> [String: Int32?] {
            var codes: [String: Int32?] = [:]
            for host in ["adapters", "reducers", "bus"] {
                guard let supervisor = supervisors.removeValue(forKey: host) else { continue }
                supervisor.signal(SIGTERM)
                let code = await supervisor.exitCode(within: .seconds(60))
                if code == nil { supervisor.signal(SIGKILL) }
                codes[host] = code
            }
            network.remove()
            return codes
        }

        deinit {
            for supervisor in supervisors.values { supervisor.signal(SIGKILL) }
        }
    }

    @Test func partitionsAndKillsOnEveryHostLoseDoubleAndReorderNothing() async throws {
        let deployment = try Deployment()
        try await deployment.prepare()
        try await deployment.up("bus")
        try await deployment.up("reducers")
        try await deployment.up("adapters")
        let remote = try deployment.remoteBus()
        let witnessClient = try ZeroMQBusClient(
            remote: remote, options: .init(process: "witness"), logger: TestLogging.logger("witness"))
        defer { witnessClient.close() }
        // Every event a subscriber on the CLI host receives, from the first, as it comes.
        let witness = EventCollector(witnessClient)
        defer { witness.stop() }
        let load = ConverterLoad { options in
            try ZeroMQBusClient(remote: remote, options: options, logger: TestLogging.logger("load"))
        }

        // The reducers' host cut off for 10 s under load, then healed.
        try await Task.sleep(for: .seconds(2))
        try deployment.network.partition("reducers", true)
        try await Task.sleep(for: .seconds(10))
        try deployment.network.partition("reducers", false)

        // kill -9 a ready process on every host in turn, three rounds, 3 s apart.
        var kills: [String: Int] = [:]
        for round in 0..<9 {
            let host = ["bus", "reducers", "adapters"][round % 3]
            try await Task.sleep(for: .seconds(3))
            guard let victim = try await deployment.readyProcesses(host).randomElement() else { continue }
            // By name, through the host's supervisor: the child that runs now, whatever ps said.
            let killed = try await deployment.run(
                ["kill", victim.name, "--signal", "KILL", "--data", deployment.data(host)], name: "kill-\(host)")
            guard killed.code == 0 else { continue }  // it ended meanwhile: not a kill
            kills[host, default: 0] += 1
        }
        try await Task.sleep(for: .seconds(2))
        let ids = await load.finish()

        // Every acknowledged request answered (bounded), and the witness caught up to the head.
        let wanted = Set(ids)
        let answered = try await witnessClient.collect(
            EventFilter(prefixes: ConverterLoad.answers), count: ids.count, timeout: .seconds(120)
        ) { wanted.contains($0.correlation) }
        let head = try await witnessClient.ping(timeout: .seconds(10)).head
        // Up to the head: events after it (the supervisors' own) may still be coming.
        let seen = Array(
            try await witness.wait(until: .now + .seconds(60)) { ($0.last?.position ?? 0) >= head }
                .map(\.position).prefix { $0 <= head })

        let exports = try await deployment.run(["log", "export"] + deployment.cliOptions, name: "export")
        #expect(exports.code == 0, "\(exports.err)")
        let codes = await deployment.stop()
        let events = try BusProcess(directory: deployment.directory.path, data: deployment.data("bus")).records().map {
            try StoredEvent(envelopeBytes: $0.body)
        }
        let audit = ConverterLoad.Audit(events: events, acknowledged: ids)
        print(
            "hosts: partition 10 s, \(kills.values.reduce(0, +)) kills \(kills.sorted { $0.key < $1.key }), "
                + "\(ids.count) requests acknowledged, \(audit.requests) in the log, \(answered.count) answered, "
                + "\(events.count) events, the witness saw \(seen.count)")
        #expect(kills.count == 3, "a process killed on every host: \(kills)")
        #expect(!ids.isEmpty)
        #expect(audit.missing.isEmpty, "acknowledged but not in the log: \(audit.missing.count)")
        #expect(audit.doubled == 0, "in the log more than once: \(audit.doubled)")
        #expect(audit.unanswered == 0, "requests without an answer: \(audit.unanswered)")
        #expect(audit.overAnswered == 0, "requests answered more than once: \(audit.overAnswered)")
        #expect(audit.contiguous)
        #expect(seen == Array(1...head), "the witness missed, reordered or repeated events")
        #expect(codes.values.allSatisfy { $0 == 0 }, "\(codes)")
        let busData = ["--data", deployment.data("bus")]
        // Read through the bus before the deployment stopped, the export is what the files
        // hold up to then (the supervisors' last events came after it).
        let local = try await deployment.run(["log", "export"] + busData, name: "export-local")
        #expect(exports.out.utf8.count >= Int(head) && local.out.hasPrefix(exports.out), "export through the bus")
        let verify = try await deployment.run(["log", "verify"] + busData, name: "verify")
        #expect(verify.code == 0, "\(verify.out) \(verify.err)")
        let replay = try await deployment.run(["replay", "--verify"] + busData, name: "replay")
        #expect(replay.code == 0, "\(replay.out) \(replay.err)")
    }

    @Test
    func lossAndDelayOnTheReducersHostLoseNothing() async throws {
        let deployment = try Deployment()
        try await deployment.prepare()
        try await deployment.up("bus")
        try await deployment.up("reducers")
        let remote = try deployment.remoteBus()
        let load = ConverterLoad { options in
            try ZeroMQBusClient(remote: remote, options: options, logger: TestLogging.logger("load"))
        }
        var random = TestSeed.generator(for: "lost frames")
        let how = try deployment.network.impair("reducers", loss: 5, delayMilliseconds: 50, seed: random.next())
        // The load goes on while every frame to and from the reducers' host is held 50 ms and
        // one in twenty is lost; then the link is healed.
        try await Task.sleep(for: .seconds(15))
        // Answered through the impaired link while it was impaired, not only after it healed.
        let reader = try ZeroMQBusClient(
            remote: remote, options: .init(process: "during"), logger: TestLogging.logger("during"))
        var answeredDuring = 0
        try await reader.readLog { event, _ in
            if ConverterLoad.answers.contains(event.type) { answeredDuring += 1 }
            return true
        }
        reader.close()
        let frames = try deployment.network.heal("reducers")
        let ids = await load.finish()
        let observer = try ZeroMQBusClient(
            remote: remote, options: .init(process: "check"), logger: TestLogging.logger("check"))
        let wanted = Set(ids)
        _ = try await observer.collect(
            EventFilter(prefixes: ConverterLoad.answers), count: ids.count, timeout: .seconds(120)
        ) { wanted.contains($0.correlation) }
        observer.close()
        _ = await deployment.stop()
        let events = try BusProcess(directory: deployment.directory.path, data: deployment.data("bus")).records().map {
            try StoredEvent(envelopeBytes: $0.body)
        }
        let audit = ConverterLoad.Audit(events: events, acknowledged: ids)
        print(
            "hosts: 5 % loss and 50 ms delay on the reducers' host for 15 s through \(how)"
                + (frames.map { ", \($0.forwarded) frames passed on and \($0.dropped) lost" } ?? "")
                + ": \(answeredDuring) answers meanwhile, \(ids.count) requests acknowledged, \(audit.requests) in the log, "
                + "\(events.count) events")
        #expect(!ids.isEmpty)
        #expect(answeredDuring > 0, "the reducers answered through the impaired link")
        if let frames {
            let share = Double(frames.dropped) / Double(max(1, frames.forwarded + frames.dropped))
            #expect(frames.forwarded > 1000 && share > 0.02 && share < 0.10, "\(frames)")
        }
        #expect(audit.missing.isEmpty, "acknowledged but not in the log: \(audit.missing.count)")
        #expect(audit.doubled == 0, "in the log more than once: \(audit.doubled)")
        #expect(audit.unanswered == 0, "requests without an answer: \(audit.unanswered)")
        #expect(audit.overAnswered == 0, "requests answered more than once: \(audit.overAnswered)")
        #expect(audit.contiguous)
    }

    /// README's "Joining a bus from another machine", run as written, step by step in its order:
    /// the laptop and the bus's machine are hosts of their own (the bus's is 198.51.100.1, as
    /// README says), each in a directory of its own; between the steps the test copies the public
    /// keys the comments say to copy. The bus's machine runs only the bus; the laptop's reducer
    /// answers its `send`, `log tail` follows the remote bus and `tui` runs on it.
    @Test func readmesStepsForJoiningABusFromAnotherMachineSucceedAsWritten() async throws {
        let lines = try ReadmeBlock.shell(after: "### Joining a bus from another machine")
        let steps = Self.steps(lines)
        try #require(steps.count == 3, "README's block has steps 1, 2 and 3: \(lines)")
        let directory = try TemporaryDirectory("joining")
        let network = try NetworkHosts(["bus-machine", "laptop"])
        defer { network.remove() }
        let machine = directory.file("bus-machine")
        let laptop = directory.file("laptop")
        for folder in [machine, laptop] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        let binDirectory = (BureauExecutable.path as NSString).deletingLastPathComponent
        let environment = [
            "PATH": binDirectory + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
            "TERM": "xterm-256color",
        ]
        /// Runs `commands` with bash on `host`, in `folder`, to its end (at most 120 s); the
        /// background jobs it started are ended with it.
        func run(
            _ commands: [String], on host: String, in folder: String, name: String
        ) async throws -> (code: Int32?, out: String, err: String) {
            let script = directory.file("\(name).sh")
            let prologue = [
                "set -euo pipefail", "cd '\(folder)'", "trap 'kill $(jobs -p) 2>/dev/null || true; wait' EXIT",
            ]
            let body = commands.enumerated().map { ReadmeBlock.scripted($1, index: $0) }
            try Files.write(script, (prologue + body).joined(separator: "\n") + "\n")
            let (executable, arguments) = try network.command(host, ["/bin/bash", script])
            let child = try ChildProcess(
                executable, arguments, directory: folder, name: name, environment: environment)
            let code = await child.exitCode(within: .seconds(120))
            if code == nil { child.signal(SIGKILL) }
            return (code, child.standardOutput, child.standardError)
        }

        // 1. On the laptop: its key pair; laptop.pub is copied to the bus's machine.
        let first = try await run(steps[0], on: "laptop", in: laptop, name: "step-1")
        #expect(first.code == 0, "step 1: \(first.err)")
        try FileManager.default.copyItem(atPath: laptop + "/laptop.pub", toPath: machine + "/laptop.pub")
        // 2. On the bus's machine: everything up to the bus, then the bus, which runs on.
        let busLine = try #require(steps[1].last, "step 2 ends with the bus")
        try #require(busLine.hasPrefix("bureau bus "), "step 2 ends with the bus: \(busLine)")
        let second = try await run(Array(steps[1].dropLast()), on: "bus-machine", in: machine, name: "step-2")
        #expect(second.code == 0, "step 2: \(second.err)")
        let (executable, arguments) = try network.command(
            "bus-machine", ["/bin/bash", "-c", "cd '\(machine)' && exec " + ReadmeBlock.scripted(busLine, index: 0)])
        let bus = try ChildProcess(executable, arguments, directory: machine, name: "bus", environment: environment)
        defer { bus.signal(SIGKILL) }
        try await bus.waitForOutput("the bus is up", timeout: .seconds(60))
        try FileManager.default.copyItem(atPath: machine + "/bus.pub", toPath: laptop + "/bus.pub")
        // 3. On the laptop, beside laptop.key and the copied bus.pub.
        let third = try await run(steps[2], on: "laptop", in: laptop, name: "step-3")
        #expect(third.code == 0, "step 3:\n\(third.out)\n\(third.err)")
        #expect(
            third.out.contains(#"bureau.converter.AmountChanged {"value":"250.00","currency":"EUR"}"#),
            "the send was answered by the laptop's converter: \(third.out)")
        bus.signal(SIGTERM)
        #expect(await bus.exitCode(within: .seconds(30)) == 0, "\(bus.standardError)")
    }

    /// README's numbered steps: each from its `# N.` comment to the next.
    static func steps(_ lines: [String]) -> [[String]] {
        var steps: [[String]] = []
        for line in lines {
            if line.range(of: #"^# [0-9]+\."#, options: .regularExpression) != nil {
                steps.append([])
            } else if !steps.isEmpty, !line.trimmingCharacters(in: .whitespaces).hasPrefix("#"), !line.isEmpty {
                steps[steps.count - 1].append(line)
            }
        }
        return steps
    }

    /// The impairment itself, at the bus's level: through it every ping takes at least the
    /// delay twice (there and back); after healing, the same bus answers as before.
    @Test func anImpairedLinkHoldsEveryFrameForItsDelayBothWays() async throws {
        let directory = try TemporaryDirectory("impaired")
        let network = try NetworkHosts(["bus"])
        defer { network.remove() }
        let (executable, arguments) = try network.command(
            "bus",
            [
                BureauExecutable.path, "bus", "--data", directory.file("data"), "--listen", "198.51.100.1:7400",
                "--insecure",
            ])
        let daemon = try ChildProcess(executable, arguments, directory: directory.path, name: "bus")
        defer { daemon.signal(SIGKILL) }
        let client = try ZeroMQBusClient(
            remote: try RemoteBus(url: "tcp://198.51.100.1:7400", curve: nil), options: .init(process: "pinger"),
            logger: TestLogging.logger("pinger"))
        defer { client.close() }
        _ = try await client.ping(timeout: .seconds(30))
        func medianPing() async throws -> Duration {
            var times: [Duration] = []
            for _ in 0..<9 {
                let started = ContinuousClock.now
                _ = try await client.ping(timeout: .seconds(10))
                times.append(ContinuousClock.now - started)
            }
            return times.sorted()[times.count / 2]
        }
        let how = try network.impair("bus", loss: 0, delayMilliseconds: 50, seed: 0)
        let impaired = try await medianPing()
        _ = try network.heal("bus")
        print("impaired link (\(how)): median ping \(impaired)")
        // A lower bound only: a slow machine makes it longer, never shorter.
        #expect(impaired >= .milliseconds(100), "\(impaired)")
        _ = try await client.ping(timeout: .seconds(10))
        daemon.signal(SIGTERM)
        #expect(await daemon.exitCode(within: .seconds(30)) == 0)
    }
}
