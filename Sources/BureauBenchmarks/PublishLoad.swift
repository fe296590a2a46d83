import ArgumentParser
import Bus
import Foundation
import Guards
import Synchronization

/// What the bus benchmarks measure between a producer and a subscriber of any bus: throughput
/// of `events` events published in batches with some in flight, and latency at a steady rate.
struct PublishLoad {
    var events: Int
    var payloadBytes: Int
    var batch: Int
    var inFlight: Int
    var rate: Int
    var latencySeconds: Int
    /// Whether every event carries a trace parent, as every hop of a sampled action does.
    var traced = false

    /// Events per second from the first publish until the subscriber has the last event, which
    /// must come in order.
    func throughput(
        producer: any EventBus, consumer: any EventBus
    ) async throws -> (
        eventsPerSecond: Double, gapsFilled: Int
    ) {
        let payload = Data(repeating: 0x61, count: payloadBytes)
        let total = events
        let batchSize = batch
        let traced = self.traced
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
        let box = UncheckedBox(next)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<inFlight {
                group.addTask {
                    while true {
                        let start = box.value.add(batchSize, ordering: .relaxed).oldValue
                        if start >= total { return }
                        let count = min(batchSize, total - start)
                        // The untraced events are made as they always were, so that the
                        // benchmark's own loop costs the same with tracing off.
                        let events =
                            traced
                            ? (0..<count).map { index in Self.traced(payload, span: UInt64(start + index + 1)) }
                            : (0..<count).map { _ in OutgoingEvent(type: "bureau.bench.Happened", payload: payload) }
                        if let refused = try await producer.publish(events).first(where: { $0.position == nil }) {
                            throw CLIFailure("the bus refused an event: \(refused)")
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let finished = try await receiving.value
        return (Double(total) / (finished - started).inSeconds, subscription.gapsFilled)
    }

    /// An event of the load carrying `span` as its trace parent.
    static func traced(_ payload: Data, span: UInt64) -> OutgoingEvent {
        var event = OutgoingEvent(type: "bureau.bench.Happened", payload: payload)
        event.traceParent = span
        return event
    }

    struct Latency {
        var p50: String
        var p99: String
        var max: String
    }

    /// At `rate` events/s for `latencySeconds`, the time from handing an event to publish until
    /// the subscriber has it.
    func latency(producer: any EventBus, consumer: any EventBus) async throws -> Latency {
        let clock = ContinuousClock()
        let origin = clock.now
        let total = rate * latencySeconds
        let perTick = max(1, rate / 1000)
        let subscription = consumer.subscribe()
        let receiving = Task {
            var samples: [Duration] = []
            samples.reserveCapacity(total)
            for try await item in subscription {
                guard case .event(let event) = item else { continue }
                let sent = event.payload.withUnsafeBytes { $0.loadUnaligned(as: Int64.self) }
                samples.append(.nanoseconds((clock.now - origin).inNanoseconds - sent))
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
            let stamp = (clock.now - origin).inNanoseconds
            var payload = Data(count: max(8, payloadBytes))
            payload.withUnsafeMutableBytes { $0.storeBytes(of: stamp, as: Int64.self) }
            let events = (0..<min(perTick, total - sentCount)).map { _ in
                OutgoingEvent(type: "bureau.bench.Latency", payload: payload)
            }
            sentCount += events.count
            publishes.append(Task { _ = try await producer.publish(events) })
        }
        for publish in publishes { try await publish.value }
        let samples = try await receiving.value
        func text(_ sample: Duration) -> String { sample.millisecondsText(decimals: 2) + " ms" }
        func at(_ fraction: Double) -> String {
            text(samples[min(samples.count - 1, Int(Double(samples.count) * fraction))])
        }
        return Latency(p50: at(0.5), p99: at(0.99), max: text(samples.last ?? .zero))
    }
}

/// The options of the benchmarks that run a ``PublishLoad``.
struct PublishLoadOptions: ParsableArguments {
    @Option(help: "(default: 1000000)", transform: BoundedNumber.integers(in: 1...1_000_000_000)) var events = 1_000_000
    @Option(help: "(default: 100)", transform: BoundedNumber.integers(in: 0...(1 << 20) - 1024)) var payloadBytes = 100
    @Option(
        help: "Events per publish request, 1 to 4096. (default: 1000)", transform: BoundedNumber.integers(in: 1...4096))
    var batch = 1000
    @Option(help: "(default: 8)", transform: BoundedNumber.integers(in: 1...1024)) var inFlight = 8
    @Option(help: "(default: 10000)", transform: BoundedNumber.integers(in: 1...1_000_000)) var rate = 10_000
    @Option(help: "(default: 5)", transform: BoundedNumber.integers(in: 1...3600)) var latencySeconds = 5

    var load: PublishLoad {
        PublishLoad(
            events: events, payloadBytes: payloadBytes, batch: batch, inFlight: inFlight, rate: rate,
            latencySeconds: latencySeconds)
    }
}
