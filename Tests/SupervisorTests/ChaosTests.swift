import BureauSchemas
import Bus
import BusTesting
import EventLog
import Foundation
import Runtime
import TestSupport
import Testing
import ZeroMQBus

#if canImport(Glibc)
    import Glibc
#endif

/// Kill -9 of random processes, the bus included, under continuous load: nothing acknowledged
/// is lost or doubled, every request gets exactly one answer, the log verifies, and the
/// reducers' recorded outputs match a re-run.
@Suite(.serialized, .timeLimit(.minutes(6)))
struct ChaosTests {
    static let deployment = """
        processes:
          bus:
            command: bus --heartbeat-ms 200
          rates-server:
            command: serve rates --port 0 --pace 5
          booking-server:
            command: serve booking --port 0
          reducers:
            command: run watchlist converter reservations alerts
            depends_on: [bus]
          rates-adapter:
            command: run rates-adapter --set rates-url=${rates-server.ready}/stats/eurofxref/eurofxref-daily.xml --set poll-ms=200
            depends_on: [bus, rates-server]
          booking-adapter:
            command: run booking-adapter --set booking-url=${booking-server.ready}
            depends_on: [bus, booking-server]
        restart:
          initial_backoff_ms: 100
          max_backoff_ms: 500
          max_restarts: 1000
        """

    @Test func killingRandomProcessesUnderLoadLosesAndDoublesNothing() async throws {
        let directory = try TemporaryDirectory("chaos")
        let file = directory.file("bureau.yaml")
        try Self.deployment.write(toFile: file, atomically: true, encoding: .utf8)
        let bus = BusProcess(directory: directory.path)
        let supervisor = try ChildProcess(
            BureauExecutable.path, ["up", "--no-tui", "--file", file, "--data", bus.location.dataDirectory],
            directory: directory.path, name: "up", readiness: true)
        defer { supervisor.signal(SIGKILL) }
        try await supervisor.waitUntilReady(timeout: .seconds(120))

        // Load: converter requests, one after another, each retried with its id until acknowledged.
        let location = bus.location
        let load = ConverterLoad { options in
            try ZeroMQBusClient(location: location, options: options, logger: TestLogging.logger("load"))
        }

        // Chaos: every 3 s, kill -9 one process chosen at random (one that is ready), 18 times,
        // or as many as fit in 150 s on a slow machine; every fourth time the bus, so that a run
        // never spares it by chance.
        var kills: [String: Int] = [:]
        var generator = TestSeed.generator(for: "chaos: which process to kill")
        let chaosEnds = ContinuousClock.now + .seconds(150)
        var round = 0
        while kills.values.reduce(0, +) < 18, ContinuousClock.now < chaosEnds {
            try await Task.sleep(for: .seconds(3))
            round += 1
            let rows = try await SupervisorProcessTests.processes(bus).filter { $0.pid > 0 && $0.state == "ready" }
            let theBus = round % 4 == 0 ? rows.first { $0.name == "bus" } : nil
            guard let victim = theBus ?? rows.randomElement(using: &generator) else { continue }
            // By name, through the supervisor: the child that runs now, whatever ps said.
            let killed = try await bus.run(["kill", victim.name, "--signal", "KILL"], name: "kill")
            guard killed.code == 0 else { continue }  // it ended meanwhile: not a kill
            kills[victim.name, default: 0] += 1
        }
        let ids = await load.finish()

        // Every process back, then every acknowledged request answered (bounded).
        let answers = ConverterLoad.answers
        let observer = try ZeroMQBusClient(
            location: bus.location, options: .init(process: "chaos-check"), logger: TestLogging.logger("c"))
        let wanted = Set(ids)
        let answered = try await observer.collect(
            EventFilter(prefixes: answers), count: ids.count, timeout: .seconds(90)
        ) {
            wanted.contains($0.correlation)
        }
        observer.close()
        supervisor.signal(SIGTERM)
        #expect(await supervisor.exitCode(within: .seconds(60)) == 0)

        let events = try bus.records().map { try StoredEvent(envelopeBytes: $0.body) }
        let audit = ConverterLoad.Audit(events: events, acknowledged: ids)
        print(
            "chaos: \(kills.values.reduce(0, +)) kills \(kills.sorted { $0.key < $1.key }), "
                + "\(ids.count) requests acknowledged, \(audit.requests) in the log, \(answered.count) answered, "
                + "\(events.count) events in all")
        #expect(kills.values.reduce(0, +) >= 15)
        #expect(kills["bus", default: 0] >= 2, "the bus was killed too: \(kills)")
        #expect(audit.missing.isEmpty, "acknowledged but not in the log: \(audit.missing.count)")
        #expect(audit.doubled == 0, "in the log more than once: \(audit.doubled)")
        #expect(audit.unanswered == 0, "requests without an answer: \(audit.unanswered)")
        #expect(audit.overAnswered == 0, "requests answered more than once: \(audit.overAnswered)")
        #expect(audit.contiguous)
        let verify = try await bus.run(["log", "verify"])
        #expect(verify.code == 0, "\(verify.out) \(verify.err)")
        let replay = try await bus.run(["replay", "--verify"])
        #expect(replay.code == 0, "\(replay.out) \(replay.err)")
    }
}
