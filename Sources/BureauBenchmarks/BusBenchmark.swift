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
        discussion: """
            Throughput: one producer publishes --events events with --payload-byte payloads in
            batches of --batch with --in-flight batches outstanding; one subscriber receives them.
            Latency: at --rate events/s, the time from handing an event to publish until the
            subscriber has it. Baselines in the same run: PUSH → relay → PUB → SUB through ipc with
            messages of the envelope's size, sequential write + fdatasync of the same bytes, and
            Redis Streams (Debian's redis-server, appendfsync always): XADD pipelined in batches of
            --batch with --in-flight batches outstanding while a consumer reads with XREAD. Without
            redis-server on the PATH (tools/setup --bench installs it) that row says so.
            """
    )

    @Option(help: "(default: 1000000)", transform: BoundedNumber.integers(in: 1...1_000_000_000)) var events = 1_000_000
    @Option(help: "(default: 100)", transform: BoundedNumber.integers(in: 0...(1 << 20) - 1024)) var payloadBytes = 100
    @Option(
        help: "Events per publish request, 1 to 4096. (default: 1000)", transform: BoundedNumber.integers(in: 1...4096))
    var batch = 1000
    @Option(help: "(default: 8)", transform: BoundedNumber.integers(in: 1...1024)) var inFlight = 8
    @Option(help: "(default: 10000)", transform: BoundedNumber.integers(in: 1...1_000_000)) var rate = 10_000
    @Option(help: "(default: 5)", transform: BoundedNumber.integers(in: 1...3600)) var latencySeconds = 5
    @Option(help: "always, interval=<ms> or never") var durability = "always"
    @Flag(help: "Measure the bus's throughput only; print each thread's CPU time and the gaps the subscriber filled.")
    var throughputOnly = false

    func run() async throws {
        startWatchdog()
        let durability = try Durability(parsing: durability)
        print(
            "# bus benchmark: \(formatted(Double(events))) events, \(payloadBytes)-byte payloads, durability \(durability)"
        )
        let envelopeSize =
            try OutgoingEvent(type: "bureau.bench.Happened", payload: Data(count: payloadBytes))
            .envelopeBytes(process: "bench").count + 30
        let bus = try await withScratchDirectory { try await busThroughput($0, durability: durability) }
        if throughputOnly {
            print(
                "bus: \(formatted(bus.eventsPerSecond)) events/s, \(String(format: "%.0f", bus.eventsPerSync)) events per fdatasync"
            )
            return
        }
        let relay = try await withScratchDirectory { try rawRelay($0, messageSize: envelopeSize) }
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
        print(
            "| bus: producer → subscriber | \(formatted(bus.eventsPerSecond)) events/s (\(String(format: "%.1f", bus.megabytesPerSecond)) MB/s of log) |"
        )
        print("| bus: group commit | \(String(format: "%.0f", bus.eventsPerSync)) events per fdatasync |")
        print("| raw libzmq PUSH → relay → PUB → SUB, \(envelopeSize)-byte messages | \(formatted(relay)) messages/s |")
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
        print("| bus / raw relay | \(String(format: "%.2f", bus.eventsPerSecond / relay)) |")
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
        var configuration = BusDaemon.Configuration(location: BusLocation(dataDirectory: directory + "/data"))
        configuration.durability = durability
        let quiet = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        let daemon = try BusDaemon(configuration: configuration, logger: quiet).start()
        var options = ZeroMQBusClient.Options(process: "bench")
        options.publishTimeout = .seconds(60)
        let producer = try ZeroMQBusClient(location: configuration.location, options: options, logger: quiet)
        let consumer = try ZeroMQBusClient(location: configuration.location, options: options, logger: quiet)
        return (daemon, producer, consumer)
    }

    func busThroughput(_ directory: String, durability: Durability) async throws -> Throughput {
        let (daemon, producer, consumer) = try startBus(directory, durability: durability)
        defer { daemon.stop() }
        let payload = Data(repeating: 0x61, count: payloadBytes)
        let total = events
        let batchSize = batch
        let subscription = consumer.subscribe(.all, after: 0, bufferCapacity: 16_384)
        let started = ContinuousClock.now
        let receiving = Task {
            var count = 0
            var last: UInt64 = 0
            for try await item in subscription {
                if case .event(let event) = item {
                    guard event.position == last + 1 else {
                        throw CLIFailure("out of order: \(event.position) after \(last)")
                    }
                    last = event.position
                    count += 1
                    if count == total { break }
                }
            }
            return ContinuousClock.now
        }
        let next = Atomic<Int>(0)
        let box = Box(next)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<inFlight {
                group.addTask {
                    while true {
                        let start = box.value.add(batchSize, ordering: .relaxed).oldValue
                        if start >= total { return }
                        let count = min(batchSize, total - start)
                        let events = (0..<count).map { _ in
                            OutgoingEvent(type: "bureau.bench.Happened", payload: payload)
                        }
                        if let refused = try await producer.publish(events).first(where: { $0.position == nil }) {
                            throw CLIFailure("the bus refused an event: \(refused)")
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let finished = try await receiving.value
        let elapsed = (finished - started).inSeconds
        let bytes = Double(try logBytes(BusLocation(dataDirectory: directory + "/data").logDirectory))
        if throughputOnly {
            printThreadTimes()
            print("  gaps filled from the log: \(subscription.gapsFilled)")
        }
        producer.close()
        consumer.close()
        // Group commit: each committed batch is one fdatasync with `always`.
        let committed = daemon.committed
        return Throughput(
            eventsPerSecond: Double(total) / elapsed, megabytesPerSecond: bytes / elapsed / 1e6,
            eventsPerSync: Double(committed.events) / Double(max(1, committed.batches)))
    }

    func logBytes(_ directory: String) throws -> Int64 {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".seg") }.reduce(0) {
            $0 + ((try FileManager.default.attributesOfItem(atPath: directory + "/" + $1)[.size] as? Int64) ?? 0)
        }
    }

    struct Latency {
        var p50: String
        var p99: String
        var max: String
    }

    func busLatency(_ directory: String, durability: Durability) async throws -> Latency {
        let (daemon, producer, consumer) = try startBus(directory, durability: durability)
        defer { daemon.stop() }
        let clock = ContinuousClock()
        let origin = clock.now
        let total = rate * latencySeconds
        let perTick = max(1, rate / 1000)
        let subscription = consumer.subscribe()
        let receiving = Task {
            var samples: [Double] = []
            samples.reserveCapacity(total)
            for try await item in subscription {
                guard case .event(let event) = item else { continue }
                let sent = event.payload.withUnsafeBytes { $0.loadUnaligned(as: Int64.self) }
                let now = Int64((clock.now - origin).inSeconds * 1e9)
                samples.append(Double(now - sent) / 1e6)
                if samples.count == total { break }
            }
            return samples.sorted()
        }
        var sentCount = 0
        var tick = clock.now
        var publishes: [Task<Void, any Error>] = []
        while sentCount < total {
            tick = tick + .milliseconds(1)
            try await clock.sleep(until: tick)
            let stamp = Int64((clock.now - origin).inSeconds * 1e9)
            var payload = Data(count: payloadBytes)
            payload.withUnsafeMutableBytes { $0.storeBytes(of: stamp, as: Int64.self) }
            let events = (0..<min(perTick, total - sentCount)).map { _ in
                OutgoingEvent(type: "bureau.bench.Latency", payload: payload)
            }
            sentCount += events.count
            publishes.append(Task { _ = try await producer.publish(events) })
        }
        for publish in publishes { try await publish.value }
        let samples = try await receiving.value
        producer.close()
        consumer.close()
        func at(_ fraction: Double) -> String {
            String(format: "%.2f ms", samples[min(samples.count - 1, Int(Double(samples.count) * fraction))])
        }
        return Latency(p50: at(0.5), p99: at(0.99), max: String(format: "%.2f ms", samples.last ?? 0))
    }

    /// Messages per second through PUSH → relay thread (PULL → PUB) → SUB, over ipc.
    func rawRelay(_ directory: String, messageSize: Int) throws -> Double {
        let context = try ZMQContext()
        let total = events
        let ingress = "ipc://\(directory)/relay-in.sock"
        let egress = "ipc://\(directory)/relay-out.sock"
        let stop = Data([0xFE])
        let ready = DispatchSemaphore(value: 0)
        let relay = try SocketThread(name: "relay") {
            guard let pull = try? context.socket(.pull), let pub = try? context.socket(.pub) else { return }
            defer {
                pull.close()
                pub.close()
            }
            _ = try? pub.setSendHighWaterMark(0)
            _ = try? pull.bind(ingress)
            _ = try? pub.bind(egress)
            ready.signal()
            while let frame = try? pull.receiveFrame() {
                _ = try? pub.send(frame.bytes)
                if frame.bytes == stop { return }
            }
        }
        ready.wait()
        let sub = try context.socket(.sub)
        try sub.setReceiveHighWaterMark(0)
        try sub.subscribe("")
        try sub.connect(egress)
        // Wait until the subscription has reached the PUB (the slow joiner), with probes.
        let probe = try context.socket(.push)
        try probe.connect(ingress)
        try sub.setReceiveTimeout(milliseconds: 100)
        var joined = false
        for _ in 0..<100 where !joined {
            try probe.send(Data([0xFF]))
            joined = (try? sub.receiveFrame()) != nil
        }
        probe.close()
        try sub.setReceiveTimeout(milliseconds: -1)
        let message = Data(repeating: 0x61, count: messageSize)
        let started = ContinuousClock.now
        let sender = try SocketThread(name: "push") {
            guard let push = try? context.socket(.push) else { return }
            _ = try? push.setSendHighWaterMark(0)
            _ = try? push.connect(ingress)
            for _ in 0..<total { _ = try? push.send(message) }
            _ = try? push.send(stop)
            push.close()
        }
        var received = 0
        while let frame = try sub.receiveFrame() {
            if frame.bytes == stop { break }
            if frame.bytes.count == messageSize { received += 1 }
        }
        let elapsed = (ContinuousClock.now - started).inSeconds
        sender.join()
        relay.join()
        sub.close()
        return Double(received) / elapsed
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

/// Each thread's user and system CPU seconds, from /proc, to see which one limits throughput.
func printThreadTimes() {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    var rows: [(String, Double, Double)] = []
    for task in tasks {
        guard let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
            let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")")
        else { continue }
        let name = String(stat[stat.index(after: open)..<close])
        let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { continue }
        rows.append((name, user / 100, system / 100))
    }
    for (name, user, system) in rows.sorted(by: { $0.1 + $0.2 > $1.1 + $1.2 }) where user + system > 0.05 {
        print(
            "  " + name.padding(toLength: 18, withPad: " ", startingAt: 0)
                + String(format: " user %6.2f s  system %6.2f s", user, system))
    }
}
