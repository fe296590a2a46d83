import ArgumentParser
import Bus
import BusTesting
import EventLog
import Foundation
import Guards
import Logging
import TestServers
import ZeroMQ
import ZeroMQBus

struct HostsBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hosts",
        abstract: "The bus across two network namespaces over CURVE TCP, beside raw libzmq TCP with and without CURVE.",
        discussion: HelpText.prose(
            """
            Needs root (network namespaces) and `bureau` beside this executable (swift build -c
            release). The daemon (`bureau bus --listen … --curve-secret-file … --allow-keys …`, \
            durability always) runs in a namespace of its own at 198.51.100.1; the producer and \
            the subscriber run here, on the bridge at 198.51.100.62, so every event crosses the \
            veth pair twice. Baselines in the same run, over the same link: PUSH → relay (in the \
            namespace) → PUB → SUB, one message per event of the envelope's size, in plain TCP \
            and with CURVE.
            """)
    )

    @OptionGroup var options: PublishLoadOptions

    func run() async throws {
        startWatchdog()
        let (events, payloadBytes, rate) = (options.events, options.payloadBytes, options.rate)
        if let reason = NetworkHosts.unavailable { throw CLIFailure("cannot make the hosts: \(reason)") }
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let bureau = here.appendingPathComponent("bureau").path
        guard FileManager.default.isExecutableFile(atPath: bureau) else {
            throw CLIFailure("\(bureau) is missing: build it too (swift build -c release --product bureau)")
        }
        let bench = here.appendingPathComponent("bureau-bench").path
        let network = try NetworkHosts(["bus"])
        defer { network.remove() }
        let host = try network.host("bus")
        print(
            "# hosts benchmark: \(formatted(Double(events))) events, \(payloadBytes)-byte payloads, bus at \(host.address)"
        )
        let envelopeSize =
            try OutgoingEvent(type: "bureau.bench.Happened", payload: Data(count: payloadBytes))
            .envelopeBytes(process: "bench").count + 30
        let server = try CurveKeyPair.generate()
        let client = try CurveKeyPair.generate()
        let curve = ZeroMQBusClient.Options.Curve(serverKey: server.publicKey, keys: client)

        let (plain, secure) = try await withScratchDirectory { directory in
            let keys = try KeyFiles.write(server, stem: directory + "/relay")
            let context = try ZMQContext()
            var rates: [Double] = []
            for (index, secret) in [nil, keys.secret].enumerated() {
                let port = 7500 + 10 * index
                let relay = try Self.spawn(
                    network,
                    [bench, "relay", "--listen", "\(host.address):\(port)"]
                        + (secret.map { ["--curve-secret-file", $0] } ?? []))
                defer { Self.end(relay) }
                rates.append(
                    try RawRelay.measure(
                        context: context, ingress: "tcp://\(host.address):\(port)",
                        egress: "tcp://\(host.address):\(port + 1)", messageSize: envelopeSize, total: events,
                        curve: secret == nil ? nil : curve))
            }
            return (rates[0], rates[1])
        }

        let load = options.load
        let (throughput, latency) = try await withScratchDirectory { directory in
            let keys = try KeyFiles.write(server, stem: directory + "/bus")
            let clientKeys = try KeyFiles.write(client, stem: directory + "/client")
            let url = "tcp://\(host.address):7400"
            var results: (Double, PublishLoad.Latency)?
            for phase in 0..<2 {
                let data = directory + "/data\(phase)"
                let daemon = try Self.spawn(
                    network,
                    [
                        bureau, "bus", "--data", data, "--log-level", "error", "--listen", "\(host.address):7400",
                        "--curve-secret-file", keys.secret, "--allow-keys", clientKeys.public,
                    ])
                defer { Self.end(daemon) }
                let remote = try RemoteBus(url: url, curve: curve)
                let quiet = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
                var options = ZeroMQBusClient.Options(process: "bench")
                options.publishTimeout = .seconds(60)
                let producer = try ZeroMQBusClient(remote: remote, options: options, logger: quiet)
                let consumer = try ZeroMQBusClient(remote: remote, options: options, logger: quiet)
                defer {
                    producer.close()
                    consumer.close()
                }
                _ = try await producer.ping(timeout: .seconds(30))
                if phase == 0 {
                    let (eventsPerSecond, _) = try await load.throughput(producer: producer, consumer: consumer)
                    results = (eventsPerSecond, PublishLoad.Latency(p50: "", p99: "", max: ""))
                } else if let (eventsPerSecond, _) = results {
                    results = (eventsPerSecond, try await load.latency(producer: producer, consumer: consumer))
                }
            }
            guard let results else { throw CLIFailure("no result") }
            return results
        }

        print("")
        print("| measure (across two network namespaces) | value |")
        print("|---|---|")
        print("| bus over CURVE TCP: producer → durable (always) → subscriber | \(formatted(throughput)) events/s |")
        print(
            "| raw libzmq TCP PUSH → relay → PUB → SUB, \(envelopeSize)-byte messages | \(formatted(plain)) messages/s |"
        )
        print("| raw libzmq TCP with CURVE, the same | \(formatted(secure)) messages/s |")
        print("| bus / raw TCP | \(String(format: "%.2f", throughput / plain)) |")
        print("| bus / raw TCP with CURVE | \(String(format: "%.2f", throughput / secure)) |")
        print(
            "| bus latency at \(formatted(Double(rate))) events/s: p50 / p99 / max | \(latency.p50) / \(latency.p99) / \(latency.max) |"
        )
    }

    /// Starts `arguments` in the bus's namespace; its output goes to this one's stderr.
    static func spawn(_ network: NetworkHosts, _ arguments: [String]) throws -> BenchmarkChild {
        let (executable, wrapped) = try network.command("bus", arguments)
        var spawn = ProcessSpawn(executable: executable, arguments: wrapped)
        spawn.fileActions = [.open(0, path: "/dev/null", flags: O_RDONLY), .duplicate(2, to: 1)]
        return try BenchmarkChild(spawn)
    }

    /// Stops a process this benchmark started (by its id) and waits for it.
    static func end(_ process: BenchmarkChild) {
        process.end(SIGTERM)
    }
}

/// `bureau-bench relay`: the raw relay of the hosts benchmark, run in the bus's namespace.
struct RelayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relay", abstract: "PULL at HOST:PORT → PUB at HOST:PORT+1, for `bureau-bench hosts`.",
        shouldDisplay: false)

    @Option(help: ArgumentHelp("Where to listen.", valueName: "host:port")) var listen: String
    @Option(help: ArgumentHelp("Serve CURVE with this secret key file.", valueName: "file")) var curveSecretFile:
        String?

    func run() throws {
        let parts = listen.split(separator: ":")
        guard parts.count == 2, let port = Int(parts[1]), (1...65534).contains(port) else {
            throw ValidationError("--listen takes HOST:PORT, not '\(listen)'")
        }
        let secret = try curveSecretFile.map { try KeyFiles.readSecretKey($0) }
        try RawRelay.serve(
            context: try ZMQContext(), ingress: "tcp://\(parts[0]):\(port)", egress: "tcp://\(parts[0]):\(port + 1)",
            curveSecretKey: secret, ready: {})
    }
}
