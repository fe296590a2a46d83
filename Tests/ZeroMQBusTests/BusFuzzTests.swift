import BureauSchemas
import Bus
import BusTesting
import EventLog
import Foundation
import Guards
import TestSupport
import Testing
import ZeroMQ
import ZeroMQBus

/// Random and malformed input to every socket the daemon binds, while valid traffic flows.
@Suite(.timeLimit(.minutes(3)))
struct BusFuzzTests {
    /// What one fuzzing socket sent and heard back.
    struct Tally: Sendable {
        var sent = 0
        var replies = 0
        var repliesWithReason = 0
    }

    @Test func randomAndMalformedInputNeverCrashesTheDaemonAndValidTrafficFlows() async throws {
        let directory = try TemporaryDirectory("fuzz")
        let bus = BusProcess(directory: directory.path)
        let daemon = try await bus.start()
        let endpoints = bus.location.ipcEndpoints

        // Valid traffic: a producer and a subscriber, for the whole run.
        // A subscriber that floods the PUB socket with subscriptions makes libzmq walk a large
        // trie on every disconnection, which can hold publishing up for seconds (README, "Known
        // limits"); valid publishes are slowed, not lost, so they get a generous timeout.
        var options = ZeroMQBusClient.Options(process: "valid")
        options.publishTimeout = .seconds(90)
        let client = try ZeroMQBusClient(location: bus.location, options: options)
        let validCount = 5_000
        let subscriber = EventCollector(client, EventFilter(prefixes: ["bureau.valid."]))
        defer { subscriber.stop() }
        let producer = Task {
            var positions: [UInt64] = []
            for batch in 0..<(validCount / 50) {
                let events = (0..<50).map {
                    OutgoingEvent(type: "bureau.valid.Event", payload: Data("\(batch)-\($0)".utf8))
                }
                positions += try await client.publish(events).compactMap(\.position)
            }
            return positions
        }

        // 100,000+ bad inputs, each socket from a thread of its own.
        async let ingress = Self.fuzzRouter(endpoints.ingress, count: 45_000, verb: WireProtocol.publish, seed: 1)
        async let reader = Self.fuzzRouter(endpoints.read, count: 35_000, verb: WireProtocol.read, seed: 2)
        async let publisher = Self.fuzzPublisher(endpoints.events, count: 20_000, seed: 3)
        async let raw = Self.fuzzRawStreams(
            [endpoints.ingress, endpoints.read, endpoints.events].map { String($0.dropFirst("ipc://".count)) },
            count: 3_000, seed: 4)
        let tallies = try await [ingress, reader, publisher, raw]
        let total = tallies.map(\.sent).reduce(0, +)
        #expect(total >= 100_000)

        // Every request to a ROUTER got an answer, and every answer says what was wrong.
        for tally in tallies[0...1] {
            #expect(tally.replies == tally.sent, "\(tally)")
            #expect(tally.repliesWithReason == tally.replies, "\(tally)")
        }
        let produced = try await producer.value
        // Every valid event is acknowledged by now; the subscriber has two minutes to receive them.
        let received = try await subscriber.wait(until: .now + .seconds(120)) { $0.count >= validCount }
            .prefix(validCount).map(\.position)
        #expect(produced.count == validCount)
        #expect(received == produced)
        #expect(daemon.isRunning)
        _ = try await client.ping()
        client.close()
        #expect(await bus.stop() == 0)
        #expect(daemon.standardError.contains("rejected"))
        let verify = try await bus.run(["log", "verify"])
        #expect(verify.code == 0)
    }

    /// Sends random requests to a ROUTER through a DEALER and counts the answers.
    static func fuzzRouter(_ endpoint: String, count: Int, verb: String, seed: UInt64) async throws -> Tally {
        try await OwnThread.run(name: "fuzz") {
            var random = Xoshiro256(seed: seed)
            let context = try ZMQContext()
            let socket = try context.socket(.dealer)
            try socket.setLinger(milliseconds: 0)
            try socket.setReceiveHighWaterMark(0)
            try socket.setSendHighWaterMark(0)
            try socket.connect(endpoint)
            var tally = Tally()
            // A valid argument to mutate: an envelope to publish, or a small read near the head.
            let valid =
                verb == WireProtocol.read
                ? try validReadRequest() : WireProtocol.batch([try validEnvelope()])
            func drain(wait: Bool) throws {
                while let frames = try socket.receiveMessage(wait: false)
                    ?? (wait ? socket.receiveMessage(wait: true) : nil)
                {
                    tally.replies += 1
                    if explainsItself(frames) { tally.repliesWithReason += 1 }
                    if wait { break }
                }
            }
            // Generous: a loaded machine answers slowly; what this catches is a request never answered.
            try socket.setReceiveTimeout(milliseconds: 60_000)
            for index in 0..<count {
                try socket.send(multipart: malformedRequest(index, verb: verb, valid: valid, random: &random))
                tally.sent += 1
                if index % 16 == 0 { try drain(wait: false) }
                // A client reads its answers: the read socket queues at most
                // WireProtocol.maxQueuedReplies for one that does not, and drops the rest.
                while tally.sent - tally.replies > WireProtocol.maxQueuedReplies / 2 { try drain(wait: true) }
            }
            while tally.replies < tally.sent {
                guard let frames = try socket.receiveMessage(wait: true) else { break }
                tally.replies += 1
                if explainsItself(frames) { tally.repliesWithReason += 1 }
            }
            return tally
        }
    }

    /// One bad request; the kinds rotate so that each reaches a different check.
    static func malformedRequest(_ index: Int, verb: String, valid: Data, random: inout Xoshiro256) -> [Data] {
        let version = Data(WireProtocol.version.utf8)
        let id = Data(random.bytes(8))
        switch index % 9 {
        case 0: return (0..<random.int(1...6)).map { _ in Data(random.bytes(random.int(0...64))) }
        case 1: return [Data(random.bytes(random.int(0...20))), Data(verb.utf8), id, Data(random.bytes(30))]
        case 2: return [version]
        case 3: return [version, Data(random.bytes(random.int(0...12))), id]
        case 4:
            return [version, Data(verb.utf8), id]
                + (0..<random.int(1...5)).map { _ in Data(random.bytes(random.int(0...200))) }
        case 5:
            var mutated = valid
            for _ in 0..<random.int(1...4) {
                mutated[random.int(0...(mutated.count - 1))] = random.byte()
            }
            return [version, Data(verb.utf8), id, mutated]
        case 6: return [version, Data(verb.utf8), Data(random.bytes(random.int(65...90))), valid]
        case 7 where index % 4500 == 7:
            // Large, but within what libzmq lets through on that socket (a larger frame drops the
            // connection, unanswered: MemoryBoundTests): 1 MiB for a publish, 60 KiB for a read.
            let size = verb == WireProtocol.read ? 60_000 : BusLimits.maxEnvelopeBytes + 10
            return [version, Data(verb.utf8), id, Data(count: size)]
        case 7: return [version, Data(verb.utf8), id, valid.prefix(random.int(0...(valid.count - 1)))]
        default: return [version, Data("no-such-verb-\(index % 7)".utf8), id]
        }
    }

    /// Whether a reply names what was wrong: an error with a message, or an ack whose
    /// rejections have reasons, or a read reply (some random read requests are valid).
    static func explainsItself(_ frames: [Data]) -> Bool {
        guard frames.count >= 4 else { return false }
        switch String(decoding: frames[1], as: UTF8.self) {
        case WireProtocol.error:
            return ((try? Bureau_Bus_ErrorReply(serializedBytes: frames[3]))?.message.isEmpty) == false
        case WireProtocol.ack:
            guard let ack = try? Bureau_Bus_PublishAck(serializedBytes: frames[3]) else { return false }
            return ack.results.allSatisfy { $0.status != .rejected || !$0.reason.isEmpty }
        case WireProtocol.events, WireProtocol.pong:
            return true
        default:
            return false
        }
    }

    /// Sends random messages to the PUB socket through an XSUB (which may send anything upstream).
    static func fuzzPublisher(_ endpoint: String, count: Int, seed: UInt64) async throws -> Tally {
        try await OwnThread.run(name: "fuzz") {
            var random = Xoshiro256(seed: seed)
            let context = try ZMQContext()
            let socket = try context.socket(.xsub)
            try socket.setLinger(milliseconds: 0)
            try socket.connect(endpoint)
            var tally = Tally()
            for _ in 0..<count {
                // Subscription messages start with 1 or 0; anything else is also tried.
                var bytes = random.bytes(random.int(0...40))
                if !bytes.isEmpty && random.int(0...1) == 0 { bytes[0] = UInt8(random.int(0...1)) }
                try socket.send(multipart: [Data(bytes)] + (random.int(0...3) == 0 ? [Data(random.bytes(10))] : []))
                tally.sent += 1
            }
            return tally
        }
    }

    /// Connects plain stream sockets to the ipc paths and writes bytes that are not ZMTP.
    static func fuzzRawStreams(_ paths: [String], count: Int, seed: UInt64) async throws -> Tally {
        try await OwnThread.run(name: "fuzz") {
            var random = Xoshiro256(seed: seed)
            var tally = Tally()
            for index in 0..<count {
                let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
                guard fd >= 0 else { continue }
                var address = sockaddr_un()
                address.sun_family = sa_family_t(AF_UNIX)
                let path = paths[index % paths.count]
                withUnsafeMutableBytes(of: &address.sun_path) { buffer in
                    path.utf8CString.withUnsafeBytes {
                        buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(buffer.count)))
                    }
                }
                let connected = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                    }
                }
                if connected == 0 {
                    let bytes = random.bytes(random.int(1...300))
                    _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    tally.sent += 1
                }
                close(fd)
            }
            return tally
        }
    }

    static func validReadRequest() throws -> Data {
        var request = Bureau_Bus_ReadRequest()
        request.after = 4990
        request.maxEvents = 10
        return try request.serializedData()
    }

    static func validEnvelope() throws -> Data {
        try OutgoingEvent(type: "bureau.fuzz.Event", payload: Data("payload".utf8)).envelopeBytes(process: "fuzz")
    }

    /// A ROUTER socket bound at `endpoint`, standing in for a daemon in a scripted test: it
    /// waits `receiveTimeout` milliseconds for each request, and closing it does not drop
    /// answers still queued when the script ends. The caller closes it.
    static func scriptedRouter(in context: ZMQContext, at endpoint: String, receiveTimeout: Int32) throws -> ZMQSocket {
        let router = try context.socket(.router)
        do {
            try router.setLinger(milliseconds: 10_000)
            try router.setReceiveTimeout(milliseconds: receiveTimeout)
            try router.bind(endpoint)
        } catch {
            router.close()
            throw error
        }
        return router
    }
}

/// Fuzz input from the project's one seeded generator.
extension Xoshiro256 {
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
    mutating func byte() -> UInt8 { UInt8.random(in: .min ... .max, using: &self) }
    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in byte() } }
}
