import BureauSchemas
import Bus
import BusTesting
import EventLog
import Foundation
import Guards
import Synchronization
import TestSupport
import Testing
import ZeroMQ
import ZeroMQBus

/// The daemon's memory stays under the bound README states whatever producers send and
/// however slowly subscribers read, and falls back when a subscriber that never read leaves.
@Suite(.timeLimit(.minutes(3)))
struct MemoryBoundTests {
    /// README, "Limits": the daemon's resident memory with the default settings.
    static let boundMiB = 256

    /// The daemon's resident set, in MiB, from /proc: all of it (`VmRSS`), or only its
    /// anonymous memory (`RssAnon`: the heap and what libzmq allocates, without the pages of
    /// the binary and libraries it has run, which grow as it runs more of its code).
    static func residentMiB(_ pid: pid_t, _ field: String = "VmRSS") -> Int? {
        guard let status = Files.read("/proc/\(pid)/status"),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return nil }
        return kilobytes / 1024
    }

    static func envelope(size: Int) -> Data {
        var envelope = Bureau_Envelope()
        envelope.id = Data(EventID.random().bytes)
        envelope.type = "bureau.test.Large"
        envelope.payload = Data(repeating: 0x5A, count: size)
        return (try? envelope.serializedData()) ?? Data()
    }

    @Test func manyLargeFramesAndASubscriberThatNeverReadsStayUnderTheBound() async throws {
        let directory = try TemporaryDirectory("memory")
        let bus = BusProcess(directory: directory.path)
        let daemon = try await bus.start()
        let baseline = try #require(Self.residentMiB(daemon.pid))
        let anonymousBaseline = try #require(Self.residentMiB(daemon.pid, "RssAnon"))

        // A subscriber that never reads: its queue in the daemon fills to the high-water mark.
        let context = try ZMQContext()
        let idle = try context.socket(.sub)
        try idle.setReceiveHighWaterMark(1)
        try idle.subscribe("")
        try idle.connect(bus.location.ipcEndpoints.events)

        // Sample the daemon's memory while the load runs.
        let gauge = Gauge(sampling: daemon.pid, from: baseline, every: .milliseconds(20))

        let client = try bus.client("memory", publishTimeout: .seconds(60))
        let megabyte = Self.envelope(size: (1 << 20) - 200)
        var refused = 0
        var refusedRaw = 0
        var committed = 0
        let raw = try context.socket(.dealer)
        try raw.setLinger(milliseconds: 0)
        try raw.setReceiveTimeout(milliseconds: 60_000)
        try raw.connect(bus.location.ipcEndpoints.ingress)
        for round in 0..<20 {
            if round % 2 == 0 {
                // A batch of nine megabyte envelopes: over what a request may carry; the client
                // knows it and does not send it.
                do {
                    _ = try await client.publish(envelopes: Array(repeating: megabyte, count: 9))
                } catch BusError.requestTooLarge {
                    refused += 1
                }
                // 32 frames of a megabyte, sent raw: four times what a request may carry, and
                // not a bureau/2 publish (one batch frame) either.
                try raw.send(
                    multipart: [
                        Data(WireProtocol.version.utf8), Data(WireProtocol.publish.utf8),
                        WireProtocol.requestID(UInt64(round + 1)),
                    ] + Array(repeating: megabyte, count: 32))
                let answer = try #require(try await raw.nextMessage())
                if answer.count == 4, String(decoding: answer[1], as: UTF8.self) == WireProtocol.error,
                    (try? Bureau_Bus_ErrorReply(serializedBytes: answer[3]))?.code == BusErrorCode.tooLarge.rawValue
                {
                    refusedRaw += 1
                }
            } else {
                // Seven megabyte events, committed, and 2,000 events of 3 KiB for the idle queue.
                let ack = try await client.publish(envelopes: (0..<7).map { _ in Self.envelope(size: (1 << 20) - 200) })
                committed += ack.results.filter { $0.status == .committed }.count
                for _ in 0..<4 {
                    let small = try await client.publish(envelopes: (0..<500).map { _ in Self.envelope(size: 3000) })
                    committed += small.results.filter { $0.status == .committed }.count
                }
            }
        }
        let loaded = try #require(Self.residentMiB(daemon.pid))
        let anonymousLoaded = try #require(Self.residentMiB(daemon.pid, "RssAnon"))
        #expect(refused == 10)
        #expect(refusedRaw == 10)
        raw.close()
        #expect(committed == 10 * 2007)

        // The subscriber leaves; its queue is freed and handed back within a few trims.
        idle.close()
        var anonymousAfter = anonymousLoaded
        for _ in 0..<150 {
            try await Task.sleep(for: .milliseconds(100))
            anonymousAfter = Self.residentMiB(daemon.pid, "RssAnon") ?? anonymousAfter
            if anonymousAfter <= anonymousBaseline + 32 { break }
        }
        let after = Self.residentMiB(daemon.pid) ?? loaded
        await gauge.stop()
        client.close()
        #expect(await bus.stop() == 0)
        print(
            "memory: the daemon's RSS was \(baseline) MiB at start, peaked at \(gauge.peak.load(ordering: .relaxed)) MiB "
                + "(bound \(Self.boundMiB) MiB), \(loaded) MiB with the idle subscriber, \(after) MiB after it left; "
                + "anonymous memory \(anonymousBaseline), \(anonymousLoaded) and \(anonymousAfter) MiB")
        #expect(gauge.peak.load(ordering: .relaxed) < Self.boundMiB)
        #expect(
            anonymousAfter <= anonymousBaseline + 32, "the idle subscriber's queue is handed back when it leaves")
        #expect(anonymousAfter < anonymousLoaded || anonymousLoaded <= anonymousBaseline + 32)
    }
}

extension MemoryBoundTests {
    /// Several producers at once, each sending requests whose batch frame is as large as libzmq
    /// lets through (a legal request's largest), as fast as it can and without waiting for
    /// answers: libzmq queues a few per producer and reads no more from it until the daemon has
    /// taken them, so the daemon holds a bounded number of them, however many are sent.
    @Test func severalProducersSendingFramesAtTheCapStayUnderTheBound() async throws {
        let directory = try TemporaryDirectory("memory")
        let bus = BusProcess(directory: directory.path)
        let daemon = try await bus.start()
        let baseline = try #require(Self.residentMiB(daemon.pid))
        let gauge = Gauge(sampling: daemon.pid, from: baseline, every: .milliseconds(10))
        let context = try ZMQContext()
        let producers = 4
        let requests = 12
        // Garbage at the cap: a batch whose first length runs past its end (malformed-request),
        // so the daemon reads and refuses each whole, as it must any request.
        let frame = Data(repeating: 0xFF, count: BusLimits.maxRequestBytes)
        var peers: [ZMQSocket] = []
        for _ in 0..<producers {
            let peer = try context.socket(.dealer)
            try peer.setLinger(milliseconds: 0)
            try peer.setReceiveTimeout(milliseconds: 60_000)
            try peer.setSendHighWaterMark(0)
            try peer.connect(bus.location.ipcEndpoints.ingress)
            peers.append(peer)
        }
        for round in 0..<requests {
            for peer in peers {
                _ = try peer.send(
                    multipart: [
                        Data(WireProtocol.version.utf8), Data(WireProtocol.publish.utf8),
                        WireProtocol.requestID(UInt64(round + 1)), frame,
                    ], wait: false)
            }
        }
        var answered = 0
        for peer in peers {
            for _ in 0..<requests {
                guard let answer = try await peer.nextMessage(), answer.count == 4,
                    (try? Bureau_Bus_ErrorReply(serializedBytes: answer[3]))?.code
                        == BusErrorCode.malformedRequest.rawValue
                else { break }
                answered += 1
            }
        }
        // A frame over the cap: libzmq drops that producer, and the daemon goes on.
        let over = try context.socket(.dealer)
        try over.setLinger(milliseconds: 0)
        try over.connect(bus.location.ipcEndpoints.ingress)
        _ = try over.send(
            multipart: [
                Data(WireProtocol.version.utf8), Data(WireProtocol.publish.utf8), WireProtocol.requestID(1),
                Data(repeating: 0xFF, count: BusLimits.maxRequestBytes + 1),
            ])
        let client = try bus.client("after")
        let still = try await client.ping()
        await gauge.stop()
        client.close()
        over.close()
        for peer in peers { peer.close() }
        #expect(await bus.stop() == 0)
        let peak = gauge.peak.load(ordering: .relaxed)
        print(
            "memory: \(producers) producers sent \(requests) requests of \(BusLimits.maxRequestBytes >> 20) MiB each "
                + "at once (\(producers * requests * (BusLimits.maxRequestBytes >> 20)) MiB), \(answered) answered; "
                + "the daemon's RSS was \(baseline) MiB at start and peaked at \(peak) MiB (bound \(Self.boundMiB) MiB)"
        )
        #expect(answered == producers * requests, "every request is answered")
        #expect(still.head == 0)
        #expect(peak < Self.boundMiB)
    }
}

extension MemoryBoundTests {
    /// Several peers, on the ingress and the read socket, each sending one message of frames
    /// without end, every frame within its socket's cap: libzmq holds a message until its last
    /// frame and counts no frames, so they would be held whole (920 MiB here). Past its memory
    /// limit the daemon drops every connection, and with them what libzmq was receiving: it stays
    /// under the bound, and serves on.
    @Test func severalPeersSendingMessagesOfFramesWithoutEndStayUnderTheBound() async throws {
        let directory = try TemporaryDirectory("memory")
        let bus = BusProcess(directory: directory.path)
        let daemon = try await bus.start()
        let baseline = try #require(Self.residentMiB(daemon.pid))
        let gauge = Gauge(sampling: daemon.pid, from: baseline, every: .milliseconds(5))
        let endpoints = bus.location.ipcEndpoints
        // Two on the ingress socket, frames of 8 MiB; one on the read socket, frames of 60 KiB:
        // each would be 400 or 120 MiB held whole.
        let plan: [(endpoint: String, frame: Data, count: Int)] = [
            (endpoints.ingress, Data(repeating: 0x41, count: BusLimits.maxRequestBytes), 50),
            (endpoints.ingress, Data(repeating: 0x42, count: BusLimits.maxRequestBytes), 50),
            (endpoints.read, Data(repeating: 0x43, count: 60 << 10), 2000),
        ]
        // Each waits for the daemon's side of the handshake: on a thread of its own.
        let peers = try await OwnThread.run(name: "test-peers") { try plan.map { try RawZMTPPeer(ipc: $0.endpoint) } }
        let sending = Task.detached {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (peer, step) in zip(peers, plan) {
                    group.addTask {
                        try await OwnThread.run(name: "test-endless") {
                            guard peer.send(frame: Data(WireProtocol.version.utf8), more: true) else { return }
                            // Never the last frame: the message does not end, until the daemon drops it.
                            for _ in 0..<step.count {
                                guard peer.send(frame: step.frame, more: true) else { return }
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        let sent = plan.reduce(0) { $0 + $1.frame.count * $1.count } >> 20
        try await daemon.waitForOutput("every connection is dropped", timeout: .seconds(60))
        try await sending.value
        for peer in peers { peer.close() }

        // It serves on: a producer's event is committed, a reader reads it.
        let client = try bus.client("after")
        let outcome = try await client.publish(OutgoingEvent(type: "bureau.test.After", payload: Data("after".utf8)))
        let read = try await client.collect(EventFilter(prefixes: ["bureau.test."]), count: 1)
        await gauge.stop()
        client.close()
        #expect(await bus.stop() == 0)
        let drops = daemon.standardError.components(separatedBy: "every connection is dropped").count - 1
        let peak = gauge.peak.load(ordering: .relaxed)
        print(
            "memory: 3 peers sent messages of frames without end (\(sent) MiB); the daemon dropped every connection "
                + "\(drops) time(s); its RSS was \(baseline) MiB at start and peaked at \(peak) MiB (bound \(Self.boundMiB) MiB)"
        )
        #expect(outcome == .committed(1))
        #expect(read.map(\.position) == [1])
        #expect(drops >= 1)
        #expect(peak < Self.boundMiB)
    }
}

/// The highest memory seen, and whether to go on sampling, shared with the sampling task.
final class Gauge: Sendable {
    let peak: Atomic<Int>
    private let sampling = Atomic<Bool>(true)
    private let sampler = Mutex<Task<Void, Never>?>(nil)

    /// Samples the resident memory of process `pid` every `period` (for at most five minutes),
    /// from `start` MiB, until ``stop()``.
    init(sampling pid: pid_t, from start: Int, every period: Duration) {
        peak = Atomic(start)
        let limit = Int(Duration.seconds(300) / period)
        let task = Task.detached { [self] in
            for _ in 0..<limit where self.sampling.load(ordering: .relaxed) {
                if let now = MemoryBoundTests.residentMiB(pid) { self.peak.max(now, ordering: .relaxed) }
                try? await Task.sleep(for: period)
            }
        }
        sampler.withLock { $0 = task }
    }

    /// Stops sampling; returns once the sampler has.
    func stop() async {
        sampling.store(false, ordering: .relaxed)
        await sampler.withLock { $0 }?.value
    }
}
