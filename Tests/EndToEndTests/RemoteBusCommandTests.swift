import Foundation
import TestSupport
import Testing

/// Commands that join a bus through `--bus tcp://HOST:PORT` with CURVE keys (or `BUREAU_BUS`,
/// `BUREAU_SERVER_KEY`, `BUREAU_CLIENT_KEY`), from a data directory of their own, and what each
/// wrong piece gets: a message saying which, within the command's timeout, and a non-zero exit.
@Suite(.timeLimit(.minutes(3)))
struct RemoteBusCommandTests {
    /// A bus listening on loopback TCP with CURVE, letting in `client.pub` only; `stranger` and
    /// `impostor` are key pairs it does not know.
    struct CurveBus {
        let directory: TemporaryDirectory
        let bus: BusProcess
        let url: String
        /// The client's own data directory: empty, so nothing can be found through it.
        let clientData: String

        func file(_ name: String) -> String { directory.file(name) }

        static func start() async throws -> CurveBus {
            let directory = try TemporaryDirectory("remote")
            for stem in ["bus", "client", "stranger", "impostor"] {
                let keygen = try ChildProcess(
                    BureauExecutable.path, ["keygen", directory.file(stem)], directory: directory.path,
                    name: "keygen-\(stem)")
                #expect(await keygen.exitCode(within: .seconds(30)) == 0)
            }
            let port = try KeysAndTCPTests.freePort()
            let bus = BusProcess(directory: directory.path)
            try await bus.start([
                "--listen", "127.0.0.1:\(port)", "--curve-secret-file", directory.file("bus.key"),
                "--allow-keys", directory.file("client.pub"),
            ])
            let clientData = directory.file("client-data")
            try FileManager.default.createDirectory(atPath: clientData, withIntermediateDirectories: true)
            return CurveBus(directory: directory, bus: bus, url: "tcp://127.0.0.1:\(port)", clientData: clientData)
        }

        /// The options that reach the bus as `client`.
        var remoteOptions: [String] {
            ["--bus", url, "--server-key", file("bus.pub"), "--client-key", file("client.key")]
        }

        /// Runs `bureau ARGUMENTS --data DATA` (the client's own directory unless given) to its
        /// end (at most 60 s).
        func run(
            _ arguments: [String], environment: [String: String] = [:], data: String? = nil, name: String
        ) async throws -> (code: Int32?, out: String, err: String) {
            try await ChildProcess.bureau(
                arguments + ["--data", data ?? clientData], in: directory.path, name: name, environment: environment,
                timeout: .seconds(60))
        }

        func publish(
            _ extra: [String], environment: [String: String] = [:], name: String
        ) async throws -> (
            code: Int32?, out: String, err: String
        ) {
            try await run(
                ["publish", "--type", "bureau.watchlist.PairAddRequested", "--json", #"{"base":"EUR","quote":"USD"}"#]
                    + extra, environment: environment, name: name)
        }
    }

    @Test func publishJoinsABusOnAnotherMachineOverCurveByOptionsOrEnvironment() async throws {
        let remote = try await CurveBus.start()
        let byOptions = try await remote.publish(
            ["--bus", remote.url, "--server-key", remote.file("bus.pub"), "--client-key", remote.file("client.key")],
            name: "options")
        #expect(byOptions.code == 0, "\(byOptions.err)")
        #expect(byOptions.out == "1\n")
        let byEnvironment = try await remote.publish(
            [],
            environment: [
                "BUREAU_BUS": remote.url, "BUREAU_SERVER_KEY": remote.file("bus.pub"),
                "BUREAU_CLIENT_KEY": remote.file("client.key"),
            ], name: "environment")
        #expect(byEnvironment.code == 0, "\(byEnvironment.err)")
        #expect(byEnvironment.out == "2\n")
        #expect(try remote.bus.records().map(\.position) == [1, 2])
        #expect(await remote.bus.stop() == 0)
    }

    @Test func aConnectionFileOrAHostsDeploymentFileSaysWhereTheBusIsAndWithWhichKeys() async throws {
        let remote = try await CurveBus.start()
        try Files.write(
            remote.file("laptop.yaml"), "url: \(remote.url)\nserver_key: bus.pub\nclient_key: client.key\n")
        try Files.write(
            remote.file("host-b.yaml"),
            "bus:\n  url: \(remote.url)\n  server_key: bus.pub\n  client_key: client.key\n"
                + "processes:\n  reducers:\n    command: run converter\n")
        try Files.write(remote.file("typo.yaml"), "url: \(remote.url)\nserver-key: bus.pub\n")
        let byConnection = try await remote.publish(["--bus", remote.file("laptop.yaml")], name: "connection")
        #expect(byConnection.code == 0 && byConnection.out == "1\n", "\(byConnection.err)")
        let byDeployment = try await remote.publish(
            [], environment: ["BUREAU_BUS": remote.file("host-b.yaml")], name: "deployment")
        #expect(byDeployment.code == 0 && byDeployment.out == "2\n", "\(byDeployment.err)")
        // An option still names another key than the file's.
        let stranger = try await remote.publish(
            ["--bus", remote.file("laptop.yaml"), "--client-key", remote.file("stranger.key"), "--timeout", "20"],
            name: "override")
        #expect(stranger.code == 1 && stranger.err.contains("the bus refused this client's key"), "\(stranger.err)")
        let typo = try await remote.publish(["--bus", remote.file("typo.yaml")], name: "typo")
        #expect(
            typo.code == 1 && typo.err.contains("typo.yaml:2: server-key: unknown field"), "\(typo.err)")
        #expect(await remote.bus.stop() == 0)
    }

    @Test func aKeyTheBusDoesNotAllowIsRefusedAtOnceAndTheDaemonLogsIt() async throws {
        let remote = try await CurveBus.start()
        let started = ContinuousClock.now
        let result = try await remote.publish(
            [
                "--bus", remote.url, "--server-key", remote.file("bus.pub"), "--client-key",
                remote.file("stranger.key"), "--timeout", "20",
            ], name: "stranger")
        // Refused by the daemon's authenticator, not left to the 20 s timeout.
        #expect(ContinuousClock.now - started < .seconds(15))
        #expect(result.code == 1)
        #expect(
            result.err.contains("cannot use the bus at \(remote.url): the bus refused this client's key"),
            "\(result.err)")
        let strangerKey = try #require(Files.read(remote.file("stranger.pub"))?.split(separator: "\n").last)
        let busLog = try #require(remote.bus.process).standardError
        #expect(busLog.contains("refused a TCP client") && busLog.contains(String(strangerKey)), "\(busLog)")
        #expect(busLog.contains("127.0.0.1"), "\(busLog)")
        #expect(try remote.bus.records().isEmpty)
        #expect(await remote.bus.stop() == 0)
    }

    @Test func eachWrongPieceIsNamedWithinTheTimeout() async throws {
        let remote = try await CurveBus.start()
        let nothingListens = "tcp://127.0.0.1:\(try KeysAndTCPTests.freePort())"
        let cases: [(name: String, arguments: [String], says: String)] = [
            (
                "impostor-server-key",
                [
                    "--bus", remote.url, "--server-key", remote.file("impostor.pub"), "--client-key",
                    remote.file("client.key"),
                ],
                "--server-key is probably not this daemon's public key"
            ),
            // Whether libzmq reports the mismatch or only the daemon's hang-up is a race; both say this.
            ("plain-tcp", ["--bus", remote.url], "requires CURVE: give --server-key"),
            (
                "unreachable",
                [
                    "--bus", nothingListens, "--server-key", remote.file("bus.pub"), "--client-key",
                    remote.file("client.key"),
                ],
                "cannot use the bus at \(nothingListens): could not connect"
            ),
            (
                "missing-client-key", ["--bus", remote.url, "--server-key", remote.file("bus.pub")],
                "with --server-key needs --client-key too"
            ),
            (
                "public-as-client-key",
                [
                    "--bus", remote.url, "--server-key", remote.file("bus.pub"), "--client-key",
                    remote.file("client.pub"),
                ],
                "holds a public key; --client-key takes the secret key"
            ),
            (
                "secret-as-server-key",
                [
                    "--bus", remote.url, "--server-key", remote.file("bus.key"), "--client-key",
                    remote.file("client.key"),
                ],
                "holds a secret key; --server-key takes the daemon's public key"
            ),
            ("not-a-url", ["--bus", "127.0.0.1:7400"], "--bus takes tcp://HOST:PORT"),
            ("bad-port", ["--bus", "tcp://127.0.0.1:99999"], "the port '99999' is out of range"),
        ]
        for (name, arguments, says) in cases {
            let result = try await remote.publish(arguments + ["--timeout", "3"], name: name)
            #expect(result.code != 0 && result.code != nil, "\(name): exit \(String(describing: result.code))")
            #expect(result.err.contains(says), "\(name): \(result.err)")
        }
        #expect(try remote.bus.records().isEmpty)
        #expect(await remote.bus.stop() == 0)
    }

    @Test func theLogToolsPrintTheSameThroughARemoteBusAsFromTheFiles() async throws {
        let remote = try await CurveBus.start()
        let requests = [
            ("bureau.watchlist.PairAddRequested", #"{"base":"EUR","quote":"USD"}"#),
            ("bureau.watchlist.PairAddRequested", #"{"base":"EUR","quote":"JPY"}"#),
            ("bureau.watchlist.PairRemoveRequested", #"{"base":"EUR","quote":"USD"}"#),
        ]
        for (index, (type, json)) in requests.enumerated() {
            let published = try await remote.run(
                ["publish", "--type", type, "--json", json] + remote.remoteOptions, name: "publish-\(index)")
            #expect(published.code == 0, "\(published.err)")
        }
        let busData = remote.bus.location.dataDirectory
        let commands: [[String]] = [
            ["log", "show"], ["log", "show", "--json", "--from", "2"], ["log", "export"], ["log", "stats", "--json"],
            ["show", "watchlist"], ["replay"], ["replay", "--verify"],
        ]
        for command in commands {
            let name = command.joined(separator: "-")
            let local = try await remote.run(command, data: busData, name: "local-\(name)")
            let through = try await remote.run(command + remote.remoteOptions, name: "remote-\(name)")
            #expect(local.code == 0 && through.code == 0, "\(name): \(local.err) \(through.err)")
            #expect(!local.out.isEmpty)
            if command == ["log", "stats", "--json"] {
                // On disk the size is the segment files'; through the bus, the envelopes'.
                let withoutBytes = { (text: String) in text.replacing(/"bytes":[0-9]+,/, with: "") }
                #expect(withoutBytes(local.out) == withoutBytes(through.out), "\(name)")
            } else {
                #expect(local.out == through.out, "\(name)")
            }
        }

        let copy = remote.file("copy")
        let pulled = try await remote.run(["log", "pull"] + remote.remoteOptions, data: copy, name: "pull")
        #expect(pulled.code == 0, "\(pulled.err)")
        #expect(pulled.out.contains("pulled 3 events from \(remote.url)"), "\(pulled.out)")
        let original = try await remote.run(["log", "export"], data: busData, name: "export-original")
        let copied = try await remote.run(["log", "export"], data: copy, name: "export-copy")
        #expect(copied.code == 0 && copied.out == original.out)
        #expect(try await remote.run(["log", "verify"], data: copy, name: "verify-copy").code == 0)

        let again = try await remote.run(["log", "pull"] + remote.remoteOptions, data: copy, name: "pull-again")
        #expect(again.code == 1)
        #expect(again.err.contains("is not empty; use a new directory"), "\(again.err)")
        let noBus = try await remote.run(["log", "pull"], data: remote.file("nowhere"), name: "pull-no-bus")
        #expect(noBus.code == 1 && noBus.err.contains("give --bus tcp://HOST:PORT"), "\(noBus.err)")
        #expect(await remote.bus.stop() == 0)
    }

    /// `bureau status`, the health check for scripts, asked of a bus on another machine: it
    /// reports that bus (its process, its head), healthy, and fails saying so once the bus is gone.
    @Test func statusReportsABusOnAnotherMachineAndFailsWhenItStopsAnswering() async throws {
        let remote = try await CurveBus.start()
        for index in 0..<3 {
            let published = try await remote.publish(remote.remoteOptions, name: "publish-\(index)")
            #expect(published.code == 0, "\(published.err)")
        }
        let busPid = try #require(remote.bus.process?.pid)
        let status = try await remote.run(["status", "--json"] + remote.remoteOptions, name: "status")
        #expect(status.code == 0, "\(status.out) \(status.err)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(status.out.utf8)) as? [String: Any])
        #expect(report["healthy"] as? Bool == true, "\(status.out)")
        let bus = try #require(report["bus"] as? [String: Any], "\(status.out)")
        #expect((bus["pid"] as? Int).map(Int32.init) == busPid, "the remote bus's own process: \(status.out)")
        #expect((bus["head"] as? Int ?? 0) >= 3, "the three events published: \(status.out)")

        let text = try await remote.run(["status"] + remote.remoteOptions, name: "status-text")
        #expect(text.code == 0, "\(text.err)")
        #expect(!text.out.isEmpty)

        #expect(await remote.bus.stop() == 0)
        let gone = try await remote.run(["status", "--json"] + remote.remoteOptions, name: "status-gone")
        #expect(gone.code == 1, "\(gone.out) \(gone.err)")
        let goneReport = try JSONSerialization.jsonObject(with: Data(gone.out.utf8)) as? [String: Any]
        #expect(goneReport?["healthy"] as? Bool == false, "\(gone.out)")
        #expect(
            (goneReport?["problems"] as? [String])?.contains { $0.hasPrefix("the bus does not answer") } == true,
            "\(gone.out) \(gone.err)")
    }

    @Test func scenarioFilesRunAgainstADeploymentWhoseBusIsOnAnotherMachine() async throws {
        let remote = try await CurveBus.start()
        let converter = try ChildProcess(
            BureauExecutable.path, ["run", "converter", "--data", remote.bus.location.dataDirectory],
            directory: remote.directory.path, name: "converter", readiness: true)
        defer { converter.signal(SIGKILL) }
        try await converter.waitUntilReady()
        let scenarios = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Scenarios/converter.yaml").path
        let result = try await remote.run(["test", scenarios] + remote.remoteOptions, name: "test")
        #expect(result.code == 0, "\(result.out) \(result.err)")
        #expect(result.out.contains(" passed, 0 failed"), "\(result.out)")
        let both = try await remote.run(["test", scenarios, "--file", "x.yaml"] + remote.remoteOptions, name: "both")
        #expect(both.code != 0 && both.err.contains("runs against a deployment that is already up"), "\(both.err)")
        #expect(await remote.bus.stop() == 0)
    }
}
