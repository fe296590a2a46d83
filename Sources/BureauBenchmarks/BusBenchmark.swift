import ArgumentParser
import Bus
import EventLog
import Foundation
import Guards
import Logging
import Synchronization
import ZeroMQ
import ZeroMQBus

struct BusBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bus",
        abstract: "Producer → bus (default durability) → subscriber, beside raw libzmq and the raw disk.",
        discussion: HelpText.prose(
            """
            Throughput: one producer publishes --events events with --payload-byte payloads in
            batches of --batch with --in-flight batches outstanding; one subscriber receives them.
            Latency: at --rate events/s, the time from handing an event to publish until the
            subscriber has it. Baselines in the same run: PUSH → relay → PUB → SUB through ipc with
            messages of the envelope's size, sequential write + fdatasync of the same bytes, and
            Redis Streams (Debian's redis-server, appendfsync always): XADD pipelined in batches of
            --batch with --in-flight batches outstanding while a consumer reads with XREAD. Without
            redis-server on the PATH (tools/setup --bench installs it) that row says so.

            The bus and the relay run --runs times each, alternating; the ratio is the best bus run
            over the best relay run (the relay alone varies by half between runs on two cores, with
            four busy threads placed differently each time).
            """)
    )

    @OptionGroup var options: PublishLoadOptions
    @Option(help: "always, interval=<ms> or never") var durability = "always"
    @Flag(help: "Measure the bus's throughput only; print each thread's CPU time and the gaps the subscriber filled.")
    var throughputOnly = false
    @Option(
        help: "How many times to measure the bus and the relay, alternating.",
        transform: BoundedNumber.integers(in: 1...20))
    var runs = 3
    @Option(help: "Record metrics into swift-prometheus (on, as `bureau bus` does) or into nothing (off).")
    var metrics = MetricsChoice.on
    @Flag(
        help:
            "Measure tracing's cost only: the bus with tracing off, then on with every event traced (each a commit span exported over OTLP/HTTP to a collector in this process), in turn, --runs times each."
    )
    var tracing = false

    func run() async throws {
        startWatchdog()
        metrics.bootstrap()
        let durability = try Durability(parsing: durability)
        if tracing { return try await tracingCost(durability: durability) }
        print(
            "# bus benchmark: \(formatted(Double(events))) events, \(payloadBytes)-byte payloads, durability \(durability)"
        )
        let envelopeSize =
            try OutgoingEvent(type: "bureau.bench.Happened", payload: Data(count: payloadBytes))
            .envelopeBytes(process: "bench").count + 30
        var buses = [try await withScratchDirectory { try await busThroughput($0, durability: durability) }]
        if throughputOnly {
            let bus = buses[0]
            print(
                "bus: \(formatted(bus.eventsPerSecond)) events/s, \(String(format: "%.0f", bus.eventsPerSync)) events per fdatasync"
            )
            return
        }
        var relays = [try await withScratchDirectory { try rawRelay($0, messageSize: envelopeSize) }]
        while buses.count < runs {
            buses.append(try await withScratchDirectory { try await busThroughput($0, durability: durability) })
            relays.append(try await withScratchDirectory { try rawRelay($0, messageSize: envelopeSize) })
        }
        let bus = buses.max { $0.eventsPerSecond < $1.eventsPerSecond } ?? buses[0]
        let relay = relays.max() ?? relays[0]
        let disk = try await withScratchDirectory { try rawDisk($0, recordSize: envelopeSize + 32, batch: batch) }
        let latency = try await withScratchDirectory { try await busLatency($0, durability: durability) }
        let redis = try await withScratchDirectory { directory in
            try RedisStreamsBaseline.findServer().map {
                try RedisStreamsBaseline(
                    server: $0, events: events, valueBytes: envelopeSize, batch: batch, inFlight: inFlight
                ).run(in: directory)
            }
        }

        print("")
        print("| measure | value |")
        print("|---|---|")
        let runsText = runs == 1 ? "" : ", best of \(runs)"
        print(
            "| bus: producer → subscriber\(runsText) | \(formatted(bus.eventsPerSecond)) events/s (\(String(format: "%.1f", bus.megabytesPerSecond)) MB/s of log) |"
        )
        if runs > 1 {
            print(
                "| bus: every run | \(buses.map { formatted($0.eventsPerSecond) }.joined(separator: " / ")) events/s |")
        }
        print("| bus: group commit | \(String(format: "%.0f", bus.eventsPerSync)) events per fdatasync |")
        print(
            "| raw libzmq PUSH → relay → PUB → SUB, \(envelopeSize)-byte messages\(runsText) | \(formatted(relay)) messages/s |"
        )
        if runs > 1 {
            print("| raw relay: every run | \(relays.map { formatted($0) }.joined(separator: " / ")) messages/s |")
        }
        print(
            "| raw disk: write + fdatasync per \(batch) records | \(formatted(disk.recordsPerSecond)) records/s (\(String(format: "%.1f", disk.megabytesPerSecond)) MB/s, \(formatted(disk.syncsPerSecond)) fdatasync/s) |"
        )
        let redisRow =
            "| Redis Streams: XADD of \(envelopeSize)-byte values, appendfsync always, pipelined \(batch) × \(inFlight), XREAD consumer |"
        if let redis {
            print("\(redisRow) \(formatted(redis)) entries/s |")
        } else {
            print("\(redisRow) not measured: no redis-server on the PATH (tools/setup --bench installs it) |")
        }
        print(
            "| bus / raw relay\(runs == 1 ? "" : " (best / best)") | \(String(format: "%.2f", bus.eventsPerSecond / relay)) |"
        )
        if let redis { print("| bus / Redis Streams | \(String(format: "%.2f", bus.eventsPerSecond / redis)) |") }
        print("| bus / raw disk | \(String(format: "%.2f", bus.eventsPerSecond / disk.recordsPerSecond)) |")
        print(
            "| latency at \(formatted(Double(rate))) events/s: p50 / p99 / max | \(latency.p50) / \(latency.p99) / \(latency.max) |"
        )
    }

    struct Throughput {
        var eventsPerSecond: Double
        var megabytesPerSecond: Double
        var eventsPerSync: Double
    }

    /// A daemon on `directory` with a producer and a consumer, all logging nothing.
    func startBus(
        _ directory: String, durability: Durability
    ) throws -> (RunningBusDaemon, ZeroMQBusClient, ZeroMQBusClient) {
        try Self.startBus(directory, durability: durability)
    }

    /// A daemon on `directory` (its log in `store` if given) with a producer and a consumer, all logging nothing.
    static func startBus(
        _ directory: String, durability: Durability, store: BusDaemon.Store? = nil
    ) throws -> (RunningBusDaemon, ZeroMQBusClient, ZeroMQBusClient) {
        var configuration = BusDaemon.Configuration(location: BusLocation(dataDirectory: directory + "/data"))
        configuration.durability = durability
        configuration.store = store
        // The memory watch runs as in `bureau bus`, with a limit it never reaches: the benchmark's
        // own producers and consumers share the daemon's process and memory.
        configuration.maxMemoryBytes = 1 << 40
        let quiet = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        let daemon = try BusDaemon(configuration: configuration, logger: quiet).start()
        var options = ZeroMQBusClient.Options(process: "bench")
        options.publishTimeout = .seconds(60)
        let producer = try ZeroMQBusClient(location: configuration.location, options: options, logger: quiet)
        let consumer = try ZeroMQBusClient(location: configuration.location, options: options, logger: quiet)
        return (daemon, producer, consumer)
    }

    var load: PublishLoad { options.load }
    var events: Int { options.events }
    var payloadBytes: Int { options.payloadBytes }
    var batch: Int { options.batch }
    var inFlight: Int { options.inFlight }
    var rate: Int { options.rate }

    func busThroughput(_ directory: String, durability: Durability) async throws -> Throughput {
        let (daemon, producer, consumer) = try startBus(directory, durability: durability)
        defer { daemon.stop() }
        let (eventsPerSecond, gapsFilled) = try await load.throughput(producer: producer, consumer: consumer)
        let bytes = Double(try logBytes(BusLocation(dataDirectory: directory + "/data").logDirectory))
        if throughputOnly {
            printThreadTimes()
            print("  gaps filled from the log: \(gapsFilled)")
        }
        producer.close()
        consumer.close()
        // Group commit: each committed batch is one fdatasync with `always`.
        let committed = daemon.committed
        return Throughput(
            eventsPerSecond: eventsPerSecond, megabytesPerSecond: bytes * eventsPerSecond / Double(events) / 1e6,
            eventsPerSync: Double(committed.events) / Double(max(1, committed.batches)))
    }

    func logBytes(_ directory: String) throws -> Int64 {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".seg") }.reduce(0) {
            $0 + ((try FileManager.default.attributesOfItem(atPath: directory + "/" + $1)[.size] as? Int64) ?? 0)
        }
    }

    func busLatency(_ directory: String, durability: Durability) async throws -> PublishLoad.Latency {
        let (daemon, producer, consumer) = try startBus(directory, durability: durability)
        defer { daemon.stop() }
        defer {
            producer.close()
            consumer.close()
        }
        return try await load.latency(producer: producer, consumer: consumer)
    }

    /// Messages per second through PUSH → relay thread (PULL → PUB) → SUB, over ipc.
    func rawRelay(_ directory: String, messageSize: Int) throws -> Double {
        let context = try ZMQContext()
        let ingress = "ipc://\(directory)/relay-in.sock"
        let egress = "ipc://\(directory)/relay-out.sock"
        let ready = DispatchSemaphore(value: 0)
        let relay = try OwnThread(name: "relay") {
            do {
                try RawRelay.serve(context: context, ingress: ingress, egress: egress, curveSecretKey: nil) {
                    ready.signal()
                }
            } catch {
                FileHandle.standardError.write(Data("the relay failed: \(error)\n".utf8))
                ready.signal()
            }
        }
        ready.wait()
        defer { relay.join() }
        return try RawRelay.measure(
            context: context, ingress: ingress, egress: egress, messageSize: messageSize, total: events, curve: nil)
    }

    struct Disk {
        var recordsPerSecond: Double
        var megabytesPerSecond: Double
        var syncsPerSecond: Double
    }

    /// Sequential write + fdatasync of the bytes the log would write, a batch per fdatasync.
    func rawDisk(_ directory: String, recordSize: Int, batch: Int) throws -> Disk {
        let path = directory + "/disk.bin"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw CLIFailure("cannot open \(path)") }
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0x61, count: recordSize * batch)
        let batches = max(1, events / batch)
        let started = ContinuousClock.now
        for _ in 0..<batches {
            _ = chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            fdatasync(fd)
        }
        let elapsed = (ContinuousClock.now - started).inSeconds
        return Disk(
            recordsPerSecond: Double(batches * batch) / elapsed,
            megabytesPerSecond: Double(batches * chunk.count) / elapsed / 1e6,
            syncsPerSecond: Double(batches) / elapsed)
    }
}
