import BureauSchemas
import Bus
import BusTesting
import EventLog
import Foundation
import Guards
import Synchronization
import TestServers
import TestSupport
import Testing
import WatchlistFeature
import ZeroMQBus

#if canImport(Glibc)
    import Glibc
#endif

/// `bureau bus --store postgres://…`: the daemon's log in PostgreSQL, read by the log tools with
/// the same `--store`, and a standby daemon that takes over when the active one is killed -9
/// while clients keep publishing and subscribing. Against a server from Debian's packages;
/// skipped, saying why, where one cannot be started.
// Creates databases and asks the server through psql, waiting for it: off the cooperative pool.
@Suite(.requiresPostgreSQL, .ownThreads)
struct PostgresBusTests {
    @Test func aBusOnAStoreAnswersOnceAndTheLogToolsReadWhatItStored() async throws {
        let directory = try TemporaryDirectory("pgbus")
        let url = try TestPostgres.database()
        let bus = BusProcess(directory: directory.path)
        try await bus.start(["--store", url])
        defer { Task { await bus.stop(SIGKILL) } }
        let client = try ZeroMQBusClient(location: bus.location, options: .init(process: "test"))
        defer { client.close() }
        let events = FailoverLoad.events(120, tag: "first")
        let outcomes = try await client.publish(events)
        let committed: [PublishOutcome] = (1...120).map { .committed(UInt64($0)) }
        #expect(outcomes == committed)
        // A retry, however late, is recognised by id: the store keeps every id.
        #expect(try await client.publish([events[3], events[119]]) == [.duplicate(4), .duplicate(120)])

        let shown = try await ChildProcess.bureau(
            ["log", "show", "--store", url, "--data", directory.file("elsewhere")], in: directory.path, name: "show")
        #expect(shown.code == 0, "\(shown.err)")
        #expect(shown.out.split(separator: "\n").count == 120)
        #expect(shown.out.split(separator: "\n").first?.hasPrefix("1 ") == true)
        let stats = try await ChildProcess.bureau(
            ["log", "stats", "--store", url, "--data", directory.file("elsewhere")], in: directory.path, name: "stats")
        #expect(stats.code == 0)
        #expect(stats.out.contains("events     120"))
        #expect(await bus.stop() == 0)

        // Exported, imported into another store and verified there, the log reads the same.
        let elsewhere = directory.file("elsewhere")
        let exported = try await ChildProcess.bureau(
            ["log", "export", "--store", url, "--data", elsewhere], in: directory.path, name: "export")
        #expect(exported.code == 0, "\(exported.err)")
        try Files.write(directory.file("log.jsonl"), exported.out)
        try Files.write(directory.file("broken.jsonl"), exported.out + "{ not an event\n")
        let copy = try TestPostgres.database()
        let broken = try await ChildProcess.bureau(
            ["log", "import", directory.file("broken.jsonl"), "--store", copy, "--data", elsewhere],
            in: directory.path, name: "import-broken")
        #expect(broken.code == 1)
        #expect(broken.err.contains("broken.jsonl line 121"), "\(broken.err)")
        let imported = try await ChildProcess.bureau(
            ["log", "import", directory.file("log.jsonl"), "--store", copy, "--data", elsewhere],
            in: directory.path, name: "import")
        #expect(imported.code == 0, "\(imported.err)")
        #expect(imported.out.contains("imported 120 events"))
        let verified = try await ChildProcess.bureau(
            ["log", "verify", "--store", copy, "--data", elsewhere], in: directory.path, name: "verify")
        #expect(verified.code == 0, "\(verified.err)")
        #expect(verified.out.contains("ok: 120 events"))
        let shownCopy = try await ChildProcess.bureau(
            ["log", "show", "--store", copy, "--data", elsewhere], in: directory.path, name: "show-copy")
        #expect(shownCopy.out == shown.out)
    }

    @Test func aStandbyTakesOverFromAKilledDaemonAndClientsLoseAndDoubleNothing() async throws {
        let directory = try TemporaryDirectory("pgstandby")
        let url = try TestPostgres.database()
        let active = BusProcess(directory: directory.path)
        try await active.start(["--store", url])
        // The standby shares the data directory: it binds the same ipc sockets once it holds
        // the lock, so that clients reconnect to it by themselves.
        let standby = BusProcess(directory: directory.path, data: active.location.dataDirectory, name: "standby")
        let standbyProcess = try await standby.start(["--store", url, "--standby"], waitUntilReady: false)
        defer {
            Task {
                await active.stop(SIGKILL)
                await standby.stop(SIGKILL)
            }
        }
        // Waiting before the load: started on a loaded machine, the standby once reached the lock
        // only after the active was killed, and took it without ever having waited.
        try await standbyProcess.waitForOutput("waiting as its standby")
        var options = ZeroMQBusClient.Options(process: "producer")
        options.publishTimeout = .seconds(30)
        let producer = try ZeroMQBusClient(location: active.location, options: options)
        let consumer = try ZeroMQBusClient(location: active.location, options: options)
        defer {
            producer.close()
            consumer.close()
        }
        try await FailoverLoad.publishAndReceiveExactlyOnce(
            batches: 40, perBatch: 50, producer: producer, consumer: consumer
        ) {
            // Killed mid-stream: the standby must take over for the rest to be acknowledged.
            #expect(await active.stop(SIGKILL) != 0)
        }
        #expect(standbyProcess.isRunning)
        let stderr = standbyProcess.standardError
        #expect(stderr.contains("waiting as its standby"))
        #expect(stderr.contains("this daemon takes over"))
        #expect(await standby.stop() == 0)
    }

    @Test func aClientGivenBothDaemonsFollowsTheStandbyToItsOwnAddress() async throws {
        let directory = try TemporaryDirectory("pgbinary")
        for stem in ["bus", "client"] {
            let keygen = try ChildProcess(
                BureauExecutable.path, ["keygen", directory.file(stem)], directory: directory.path,
                name: "keygen-\(stem)")
            #expect(await keygen.exitCode(within: .seconds(30)) == 0)
        }
        let url = try TestPostgres.database()
        // Two daemons of one bus on two addresses (two machines' worth: their own data
        // directories), sharing the store and the bus's key pair.
        let ports = [try TCPPorts.freeTriple(), try TCPPorts.freeTriple()]
        func daemonOptions(_ port: Int) -> [String] {
            [
                "--store", url, "--listen", "127.0.0.1:\(port)", "--curve-secret-file", directory.file("bus.key"),
                "--allow-keys", directory.file("client.pub"),
            ]
        }
        let active = BusProcess(directory: directory.path, data: directory.file("host-a"))
        try await active.start(daemonOptions(ports[0]))
        let standby = BusProcess(directory: directory.path, data: directory.file("host-b"), name: "standby")
        let standbyProcess = try await standby.start(daemonOptions(ports[1]) + ["--standby"], waitUntilReady: false)
        defer {
            Task {
                await active.stop(SIGKILL)
                await standby.stop(SIGKILL)
            }
        }
        try await standbyProcess.waitForOutput("waiting as its standby")
        let remote = try RemoteBus(
            url: "tcp://127.0.0.1:\(ports[0]),tcp://127.0.0.1:\(ports[1])", serverKeyFile: directory.file("bus.pub"),
            clientKeyFile: directory.file("client.key"))
        var options = ZeroMQBusClient.Options(process: "laptop")
        options.publishTimeout = .seconds(30)
        let producer = try ZeroMQBusClient(remote: remote, options: options, logger: TestLogging.logger("producer"))
        let consumer = try ZeroMQBusClient(remote: remote, options: options, logger: TestLogging.logger("consumer"))
        defer {
            producer.close()
            consumer.close()
        }
        try await FailoverLoad.publishAndReceiveExactlyOnce(
            batches: 20, perBatch: 50, producer: producer, consumer: consumer
        ) {
            #expect(await active.stop(SIGKILL) != 0)
        }
        #expect(standbyProcess.standardError.contains("this daemon takes over"))
        #expect(await standby.stop() == 0)
    }

    @Test func aReducerRestartedOnAnotherHostResumesFromItsSnapshotInTheStore() async throws {
        let directory = try TemporaryDirectory("pgmove")
        let url = try TestPostgres.database()
        let port = try TCPPorts.freeTriple()
        let bus = BusProcess(directory: directory.path)
        try await bus.start(["--store", url, "--listen", "127.0.0.1:\(port)", "--insecure"])
        defer { Task { await bus.stop(SIGKILL) } }
        let client = try ZeroMQBusClient(location: bus.location, options: .init(process: "test"))
        defer { client.close() }
        let quotes = ["USD", "GBP", "JPY", "CHF", "SEK"]
        var lastRequest: UInt64 = 0
        for quote in quotes {
            let outcome = try await client.publish(OutgoingEvent(PairAddRequested(base: "EUR", quote: quote)))
            lastRequest = try #require(outcome.position)
        }

        // Host A: the bus's own machine. It answers every request, then stops, saving its snapshot.
        let hostA = try ChildProcess(
            BureauExecutable.path,
            ["run", "watchlist", "--data", bus.location.dataDirectory, "--store", url, "--snapshot-every", "1"],
            directory: directory.path, name: "host-a")
        try await hostA.waitForOutput("caught up")
        // Each request is answered, added or rejected (no rates are known yet): either is an output.
        try await Self.waitForEvents(
            of: ["bureau.watchlist.PairAdded", "bureau.watchlist.PairRejected"], count: quotes.count, on: client)
        hostA.signal(SIGTERM)
        #expect(await hostA.exitCode(within: .seconds(30)) == 0)
        let row = try TestPostgres.server().sql(
            "SELECT position FROM bureau_snapshots WHERE module = 'watchlist'",
            database: String(url.split(separator: "/").last ?? ""))
        let saved = try #require(UInt64(row.trimmingCharacters(in: .whitespacesAndNewlines)), "no snapshot row: \(row)")
        // It covers every request A answered. (Not its answers: the host's own outputs reach its
        // subscription after they reach this client, and it may stop before they do.)
        #expect(saved >= lastRequest, "\(hostA.standardError)")

        // Host B: another machine's data directory, which has never held a snapshot; it joins
        // the bus over TCP and starts from the snapshot A left in the store.
        let hostB = try ChildProcess(
            BureauExecutable.path,
            [
                "run", "watchlist", "--data", directory.file("host-b"), "--store", url, "--bus",
                "tcp://127.0.0.1:\(port)",
            ],
            directory: directory.path, name: "host-b")
        try await hostB.waitForOutput("host.from_position=\(saved)")
        hostB.signal(SIGTERM)
        #expect(await hostB.exitCode(within: .seconds(30)) == 0)
        #expect(!FileManager.default.fileExists(atPath: directory.file("host-b/snapshots/watchlist.snapshot")))
    }

    /// Waits (at most 30 s) until `count` events of `types` are in the log.
    static func waitForEvents(of types: [String], count: Int, on client: ZeroMQBusClient) async throws {
        let events = try await client.collect(.types(types), count: count, timeout: .seconds(30))
        guard events.count == count else {
            throw TestSupportError("\(events.count) of \(count) \(types) events within 30 s")
        }
    }
}
