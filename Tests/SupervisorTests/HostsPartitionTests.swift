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

/// The longest of the hosts' tests, on hosts of its own (subnet 1), so that it runs beside
/// ``HostsTests``, whose tests run one after another: the same deployment over three hosts,
/// partitioned and killed under load.
@Suite(
    .timeLimit(.minutes(8)), .requiresNetworkHosts,
    // Makes and removes namespaces and links with `ip`, waiting for each: off the cooperative pool.
    .ownThreads)
struct HostsPartitionTests {
    @Test func partitionsAndKillsOnEveryHostLoseDoubleAndReorderNothing() async throws {
        // Subnet 1: HostsTests' deployments, one at a time, are in subnet 0 meanwhile.
        let deployment = try HostsTests.Deployment(subnet: 1)
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
        var generator = TestSeed.generator(for: "hosts partition: which process to kill")
        for round in 0..<9 {
            let host = ["bus", "reducers", "adapters"][round % 3]
            try await Task.sleep(for: .seconds(3))
            guard let victim = try await deployment.readyProcesses(host).randomElement(using: &generator) else {
                continue
            }
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
}
