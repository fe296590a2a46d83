import BureauSchemas
import Bus
import EventLog
import Foundation
import Guards
import Hummingbird
import Logging
import OTLPTracing
import ServiceLifecycle
import Synchronization
import Tracing

extension BusBenchmark {
    /// The bus's throughput with tracing off, then on with every event traced, in turn: the
    /// daemon makes a commit span for each event and swift-otel exports them over OTLP/HTTP to
    /// a collector in this process, which counts what it receives.
    func tracingCost(durability: Durability) async throws {
        print(
            "# bus benchmark, tracing: \(formatted(Double(events))) events, \(payloadBytes)-byte payloads, durability \(durability)"
        )
        let sink = try await OTLPSink.start()
        var configuration = OTLPConfiguration(endpoint: "http://127.0.0.1:\(sink.port)/v1/traces", serviceName: "bench")
        // A queue that holds a batch's spans: the default (2,048) drops most of them at this rate.
        configuration.maxQueueSize = 1 << 20
        configuration.maxExportBatchSize = 8192
        configuration.scheduleDelay = .milliseconds(100)
        let exporter = OTLPSpanExporter(configuration: configuration)
        InstrumentationSystem.bootstrap(OTLPTracer(exporter: exporter))
        let exporting = Task { await exporter.run() }

        var off: [Double] = []
        var on: [Double] = []
        var spans: [Int] = []
        for _ in 0..<runs {
            BusTracing.turnOff()
            off.append(
                try await withScratchDirectory { try await busThroughput($0, durability: durability, traced: false) })
            BusTracing.turnOn()
            let before = sink.spans
            on.append(
                try await withScratchDirectory { try await busThroughput($0, durability: durability, traced: true) })
            // Every span the run made reaches the collector before the next run.
            let deadline = ContinuousClock.now + .seconds(60)
            while sink.spans - before < events, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            spans.append(sink.spans - before)
        }
        BusTracing.turnOff()
        exporter.shutdown()
        await exporting.value
        try await sink.stop()

        let bestOff = off.max() ?? 0
        let bestOn = on.max() ?? 0
        print("")
        print("| measure | value |")
        print("|---|---|")
        print("| bus, tracing off, best of \(runs) | \(formatted(bestOff)) events/s |")
        print("| bus, tracing off: every run | \(off.map(formatted).joined(separator: " / ")) events/s |")
        print("| bus, every event traced, best of \(runs) | \(formatted(bestOn)) events/s |")
        print("| bus, every event traced: every run | \(on.map(formatted).joined(separator: " / ")) events/s |")
        print(
            "| spans received by the collector, run by run | \(spans.map { formatted(Double($0)) }.joined(separator: " / ")) |"
        )
        print("| traced / off (best / best) | \(String(format: "%.2f", bestOn / max(bestOff, 1))) |")
    }

    func busThroughput(_ directory: String, durability: Durability, traced: Bool) async throws -> Double {
        let (daemon, producer, consumer) = try startBus(directory, durability: durability)
        defer { daemon.stop() }
        var load = self.load
        load.traced = traced
        let (eventsPerSecond, _) = try await load.throughput(producer: producer, consumer: consumer)
        producer.close()
        consumer.close()
        return eventsPerSecond
    }
}

/// An OTLP/HTTP collector that answers every export at once and counts the spans it was
/// sent: for the benchmark, which needs exports to succeed, not their contents.
final class OTLPSink: Sendable {
    let port: Int
    private let counter: UncheckedBox<Atomic<Int>>
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    /// Spans received so far.
    var spans: Int { counter.value.load(ordering: .relaxed) }

    private init(port: Int, counter: UncheckedBox<Atomic<Int>>, group: ServiceGroup, task: Task<Void, any Error>) {
        self.port = port
        self.counter = counter
        self.group = group
        self.task = task
    }

    static func start() async throws -> OTLPSink {
        let counter = UncheckedBox(Atomic<Int>(0))
        let router = Router()
        router.post("/v1/traces") { request, _ -> Response in
            var body = try await request.body.collect(upTo: 256 << 20)
            let bytes = body.readBytes(length: body.readableBytes) ?? []
            // An export that does not parse is refused (the exporter counts it failed), not counted as none.
            counter.value.add(try bytes.withUnsafeBytes { try OTLPSink.countSpans($0) }, ordering: .relaxed)
            return Response(status: .ok, headers: [.contentType: "application/x-protobuf"])
        }
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let quiet = Logger(label: "sink") { _ in SwiftLogNoOpLogHandler() }
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in listening.yield(channel.localAddress?.port ?? 0) }, logger: quiet)
        let group = ServiceGroup(services: [application], logger: quiet)
        let task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        let port = await iterator.next() ?? 0
        return OTLPSink(port: port, counter: counter, group: group, task: task)
    }

    /// The spans of an `ExportTraceServiceRequest`: field 2 of each ScopeSpans (field 2) of each
    /// ResourceSpans (field 1).
    static func countSpans(_ request: UnsafeRawBufferPointer) throws -> Int {
        var count = 0
        var resources = WireReader(request)
        while !resources.isAtEnd {
            guard case (1, .bytes(let resource)) = try resources.next() else { continue }
            var scopes = WireReader(request, range: resource)
            while !scopes.isAtEnd {
                guard case (2, .bytes(let scope)) = try scopes.next() else { continue }
                var spans = WireReader(request, range: scope)
                while !spans.isAtEnd {
                    if case (2, .bytes) = try spans.next() { count += 1 }
                }
            }
        }
        return count
    }

    /// Stops the sink; throws what ended its server, if anything did, so that a run whose sink
    /// failed does not print figures as if it had received every span.
    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }
}
