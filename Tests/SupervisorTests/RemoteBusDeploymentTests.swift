import Foundation
import TestServers
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `bureau up --file host-b.yaml` on a host whose deployment joins a bus on another machine
/// (here a CURVE bus on loopback TCP with a data directory of its own): it waits for the bus,
/// runs its processes against it, shows it in `ps`, restarts what crashes and keeps snapshots
/// at home.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct RemoteBusDeploymentTests {
    /// Keys for a bus and a host, a free port, and `host-b.yaml` joining that bus.
    struct Host {
        let directory: TemporaryDirectory
        let url: String
        let port: Int
        let bus: BusProcess
        var data: String { directory.file("host-b") }
        var file: String { directory.file("host-b.yaml") }
        var remoteOptions: [String] {
            ["--bus", url, "--server-key", directory.file("bus.pub"), "--client-key", directory.file("host-b.key")]
        }

        static func make(_ name: String) async throws -> Host {
            let directory = try TemporaryDirectory(name)
            for stem in ["bus", "host-b", "stranger"] {
                let keygen = try ChildProcess(
                    BureauExecutable.path, ["keygen", directory.file(stem)], directory: directory.path,
                    name: "keygen-\(stem)")
                #expect(await keygen.exitCode(within: .seconds(30)) == 0)
            }
            let port = try TCPPorts.freeTriple()
            try Files.write(
                directory.file("host-b.yaml"),
                """
                bus:
                  url: tcp://127.0.0.1:\(port)
                  server_key: bus.pub
                  client_key: host-b.key
                processes:
                  reducers:
                    command: run watchlist converter reservations alerts
                    depends_on: [bus]
                """)
            return Host(
                directory: directory, url: "tcp://127.0.0.1:\(port)", port: port,
                bus: BusProcess(directory: directory.path, data: directory.file("bus-data")))
        }

        /// Starts the bus, letting in the keys in `allowed` (public key files).
        func startBus(allowing allowed: String) async throws {
            try await bus.start([
                "--listen", "127.0.0.1:\(port)", "--curve-secret-file", directory.file("bus.key"), "--allow-keys",
                directory.file(allowed),
            ])
        }

        func up() throws -> ChildProcess {
            try ChildProcess(
                BureauExecutable.path, ["up", "--no-tui", "--file", file, "--data", data], directory: directory.path,
                name: "up", readiness: true)
        }

        /// `bureau ARGUMENTS --data host-b` to its end.
        func run(_ arguments: [String], name: String) async throws -> (code: Int32?, out: String, err: String) {
            try await ChildProcess.bureau(arguments + ["--data", data], in: directory.path, name: name)
        }

        func processes() async throws -> [SupervisorProcessTests.Row] {
            let result = try await run(["ps", "--json"], name: "ps")
            try #require(result.code == 0, "bureau ps: \(result.err)")
            try #require(result.out.hasPrefix("["), "bureau ps --json: \(result.out)")
            return try JSONDecoder().decode([SupervisorProcessTests.Row].self, from: Data(result.out.utf8))
        }

        /// Asks `ps` until `done` holds of its rows, at most 200 times 50 ms apart (the
        /// supervisor's state is read through its control socket; there is no event to await).
        func processes(until done: ([SupervisorProcessTests.Row]) -> Bool) async throws -> [SupervisorProcessTests.Row]
        {
            var rows = try await processes()
            for _ in 0..<200 where !done(rows) {
                try await Task.sleep(for: .milliseconds(50))
                rows = try await processes()
            }
            return rows
        }
    }

    @Test func aHostsDeploymentWaitsForTheRemoteBusThenRunsItsReducersAgainstIt() async throws {
        let host = try await Host.make("host-b")
        let supervisor = try host.up()
        defer { supervisor.signal(SIGKILL) }

        // Nothing starts before the bus answers.
        try await SupervisorProcessTests.watch(supervisor) { $0.contains("waiting for the bus at \(host.url)") }
        let waiting = try await host.processes()
        #expect(waiting.map(\.name) == [host.url, "reducers"])
        #expect(waiting.map(\.state) == ["starting", "pending"], "\(waiting)")

        try await host.startBus(allowing: "host-b.pub")
        try await supervisor.waitUntilReady(timeout: .seconds(120))
        #expect(supervisor.standardOutput.contains("the bus at \(host.url) answers"))
        let rows = try await host.processes()
        #expect(rows.map(\.state) == ["ready", "ready"], "\(rows)")

        // The reducers on this host answer a request sent to the remote bus.
        let added = try await host.run(
            ["send", "bureau://converter/amount?value=250&currency=EUR"] + host.remoteOptions, name: "send")
        #expect(added.code == 0, "\(added.out) \(added.err)")
        #expect(added.out.contains("bureau.converter."), "\(added.out)")

        // kill -9 the reducers: restarted here, the supervisor's events on the remote log.
        let reducers = try #require(rows.last)
        let killed = try await host.run(["kill", reducers.name, "--signal", "KILL"], name: "kill")
        #expect(killed.code == 0, "\(killed.err)")
        let restarted = try await host.processes { $0.last?.restarts == 1 && $0.last?.state == "ready" }
        #expect(restarted.last?.restarts == 1 && restarted.last?.state == "ready", "\(restarted)")
        let system = try await host.bus.run(["log", "show", "--type", "bureau.system.Process"])
        #expect(system.out.contains("ProcessExited") && system.out.contains("reducers"), "\(system.out)")

        // SIGTERM: everything stops; snapshots are on this host, none beside the bus.
        supervisor.signal(SIGTERM)
        #expect(await supervisor.exitCode(within: .seconds(60)) == 0)
        // The last exit is on the remote bus: nothing here stops that bus, so the supervisor's
        // client had to hand it over before the supervisor ended.
        let exits = try await SupervisorProcessTests.exits(host.bus)
        #expect(
            exits.map(\.description) == ["reducers: restarting in 500 ms (restart 1 of 5)", "reducers: stopped"],
            "\(exits)")
        let snapshots = Files.list(host.data + "/snapshots")
        #expect(snapshots.contains { $0.hasPrefix("converter") }, "\(snapshots)")
        #expect(!FileManager.default.fileExists(atPath: host.bus.location.snapshotDirectory))
        #expect(await host.bus.stop() == 0)
    }

    @Test func aBusThatRefusesTheHostsKeyStopsUpBeforeAnythingStarts() async throws {
        let host = try await Host.make("host-b-refused")
        try await host.startBus(allowing: "stranger.pub")
        let supervisor = try host.up()
        defer { supervisor.signal(SIGKILL) }
        #expect(await supervisor.exitCode(within: .seconds(60)) == 1)
        #expect(supervisor.standardError.contains("the bus refused this client's key"), "\(supervisor.standardError)")
        #expect(!supervisor.standardOutput.contains("reducers"), "\(supervisor.standardOutput)")
        #expect(await host.bus.stop() == 0)
    }

    @Test func upStoppedWhileItWaitsForTheBusEndsCleanly() async throws {
        let host = try await Host.make("host-b-stopped")
        let supervisor = try host.up()
        defer { supervisor.signal(SIGKILL) }
        try await SupervisorProcessTests.watch(supervisor) { $0.contains("waiting for the bus at \(host.url)") }
        supervisor.signal(SIGTERM)
        #expect(await supervisor.exitCode(within: .seconds(30)) == 0, "\(supervisor.standardError)")
        #expect(!supervisor.standardOutput.contains("reducers"), "\(supervisor.standardOutput)")
    }
}
