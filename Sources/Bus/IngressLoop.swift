import BureauSchemas
import EventLog
import Logging
import SwiftProtobuf
import ZeroMQ

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// The sequencer's loop: receives publish requests, appends, makes durable, publishes, acknowledges.
///
/// Runs on a thread of its own that owns the ingress ROUTER sockets, the PUB sockets and the
/// log's writer. Each wake-up drains every request waiting (up to a cap) into one batch, so
/// one fdatasync covers all of them (group commit).
final class IngressLoop {
    private let ingress: [ZMQSocket]
    private let events: [ZMQSocket]
    private let log: any EventLog
    private var sequencer: Sequencer
    private let state: DaemonState
    private let stop: WakeSignal
    private let heartbeatInterval: Duration
    private let durability: Durability
    private var logger: Logger
    private var badInput: BadInputLog

    /// The most events one wake-up takes in; more waiting requests are taken next time.
    private let maxEventsPerBatch = 32_768
    /// The most messages one wake-up reads from a socket, whatever they hold, so that a flood
    /// of bad input cannot hold back the batch that valid requests wait in.
    private let maxMessagesPerDrain = 4096

    init(
        ingress: [ZMQSocket], events: [ZMQSocket], log: any EventLog, sequencer: Sequencer, state: DaemonState,
        stop: WakeSignal, configuration: BusDaemon.Configuration, logger: Logger
    ) {
        self.ingress = ingress
        self.events = events
        self.log = log
        self.sequencer = sequencer
        self.state = state
        self.stop = stop
        heartbeatInterval = configuration.heartbeatInterval
        durability = configuration.durability
        self.logger = logger
        badInput = BadInputLog(logger: logger)
    }

    private struct Request {
        let socket: Int
        let identity: Data
        let requestID: Data
        let envelopes: [Data]
    }

    /// Runs until the stop signal rings or the log fails; closes its sockets either way.
    func run() throws {
        defer {
            for socket in ingress + events { socket.close() }
        }
        var poller = ZMQPoller()
        let ingressItems = ingress.map { poller.add($0) }
        let stopItem = poller.add(fileDescriptor: stop.fileDescriptor)
        let clock = ContinuousClock()
        var nextHeartbeat = clock.now
        var pending: [Request] = []
        while true {
            var wait = max(0, (nextHeartbeat - clock.now).milliseconds)
            if case .interval(let milliseconds) = durability { wait = min(wait, milliseconds) }
            try poller.poll(timeout: wait)
            if poller.isReadable(stopItem) { break }
            var taken = 0
            for (index, item) in ingressItems.enumerated() where poller.isReadable(item) {
                taken += try drain(socket: index, into: &pending, budget: maxEventsPerBatch - taken)
            }
            if !pending.isEmpty {
                try process(pending)
                pending.removeAll(keepingCapacity: true)
            }
            if clock.now >= nextHeartbeat {
                try publishHeartbeat()
                nextHeartbeat = clock.now + heartbeatInterval
            }
            try log.syncIfDue()
            badInput.summarizeIfDue()
        }
    }

    /// Receives the requests waiting on one socket; answers pings and bad input at once.
    private func drain(socket index: Int, into pending: inout [Request], budget: Int) throws -> Int {
        let socket = ingress[index]
        var taken = 0
        var messages = 0
        while taken < budget, messages < maxMessagesPerDrain, let frames = try socket.receiveMessage(wait: false) {
            messages += 1
            switch RequestFrames.parse(frames) {
            case .failure(let problem):
                badInput.record(problem.message, socket: "ingress")
                reply(on: socket, to: frames.first ?? Data(), verb: WireProtocol.error, requestID: problem.requestID) {
                    var error = Bureau_Bus_ErrorReply()
                    error.code = problem.code
                    error.message = problem.message
                    return error
                }
            case .success(let request):
                switch request.verb {
                case WireProtocol.publish:
                    guard request.arguments.count <= WireProtocol.maxEnvelopesPerPublish else {
                        let reason =
                            "a publish request carries at most \(WireProtocol.maxEnvelopesPerPublish) envelopes, "
                            + "not \(request.arguments.count)"
                        badInput.record(reason, socket: "ingress")
                        reply(on: socket, to: request.identity, verb: WireProtocol.ack, requestID: request.requestID) {
                            var ack = Bureau_Bus_PublishAck()
                            ack.results = Array(repeating: .rejected(reason), count: request.arguments.count)
                            ack.head = log.head
                            return ack
                        }
                        continue
                    }
                    pending.append(
                        Request(
                            socket: index, identity: request.identity, requestID: request.requestID,
                            envelopes: request.arguments))
                    taken += max(1, request.arguments.count)
                case WireProtocol.ping:
                    reply(on: socket, to: request.identity, verb: WireProtocol.pong, requestID: request.requestID) {
                        state.pong(head: log.head)
                    }
                default:
                    let message = "unknown verb '\(request.verb)' on the ingress socket: use publish or ping"
                    badInput.record(message, socket: "ingress")
                    reply(on: socket, to: request.identity, verb: WireProtocol.error, requestID: request.requestID) {
                        var error = Bureau_Bus_ErrorReply()
                        error.code = "unknown-verb"
                        error.message = message
                        return error
                    }
                }
            }
        }
        return taken
    }

    private func process(_ requests: [Request]) throws {
        // Kept to go back to if the log refuses the batch: the package heads must not name
        // positions that were never written.
        let before = sequencer
        let batch = sequencer.sequence(requests.map(\.envelopes), log: log, now: Self.wallClock())
        var results = batch.results
        if !batch.records.isEmpty {
            do {
                try log.append(batch.records)
            } catch {
                sequencer = before
                // Nothing of this batch is in the log: say so to every producer, who may retry.
                logger.error("could not append to the log", metadata: ["error": "\(error)"])
                results = results.map { list in
                    list.map { $0.status == .committed ? .rejected("the log could not append: \(error)") : $0 }
                }
                acknowledge(requests, results)
                return
            }
            // A failed fdatasync leaves the log's state unknown; stop, so that the next start
            // recovers it, rather than acknowledge what may not be durable.
            try log.commit()
            var meta: (UInt64, UInt64) = (0, 0)
            for publication in batch.publications {
                meta = (publication.position.littleEndian, publication.previousInPackage.littleEndian)
                withUnsafeBytes(of: &meta) { meta in
                    for socket in events {
                        _ = try? socket.send(publication.type, more: true, wait: false)
                        _ = try? socket.send(meta, more: true, wait: false)
                        _ = try? socket.send(publication.body, wait: false)
                    }
                }
            }
            state.publishedHead.store(log.head, ordering: .releasing)
            state.committedBatches.add(1, ordering: .relaxed)
            state.committedEvents.add(batch.records.count, ordering: .relaxed)
        }
        for list in results {
            for result in list where result.status == .rejected {
                badInput.record(result.reason, socket: "ingress")
            }
        }
        acknowledge(requests, results)
    }

    private func acknowledge(_ requests: [Request], _ results: [[Bureau_Bus_PublishResult]]) {
        let head = log.head
        for (request, list) in zip(requests, results) {
            let body = PublishAckEncoding.encode(list, head: head)
            _ = try? ingress[request.socket].send(
                multipart: [request.identity, version, ackVerb, request.requestID, body], wait: false)
        }
    }

    private let version = Data(WireProtocol.version.utf8)
    private let ackVerb = Data(WireProtocol.ack.utf8)

    private func publishHeartbeat() throws {
        var heartbeat = Bureau_Bus_Heartbeat()
        heartbeat.head = log.head
        heartbeat.epochStart = sequencer.epochStart
        heartbeat.epoch = state.epoch
        heartbeat.intervalMs = UInt32(clamping: heartbeatInterval.milliseconds)
        heartbeat.packageHeads = sequencer.packageHeads.sorted { $0.key < $1.key }.map { package, position in
            var head = Bureau_Bus_PackageHead()
            head.package = package
            head.position = position
            return head
        }
        let body = try heartbeat.serializedData()
        for socket in events {
            _ = try? socket.send(Data(WireProtocol.heartbeatTopic.utf8), more: true, wait: false)
            _ = try? socket.send(body, wait: false)
        }
    }

    /// Sends a reply; a peer that has gone away or stopped reading is skipped, never waited for.
    private func reply(
        on socket: ZMQSocket, to identity: Data, verb: String, requestID: Data,
        _ message: () throws -> some SwiftProtobuf.Message
    ) {
        guard let body = try? message().serializedData() else { return }
        _ = try? socket.send(
            multipart: [identity, Data(WireProtocol.version.utf8), Data(verb.utf8), requestID, body], wait: false)
    }

    static func wallClock() -> (seconds: Int64, nanos: Int32) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return (Int64(now.tv_sec), Int32(now.tv_nsec))
    }
}

/// A request as the daemon's ROUTER sockets receive it: `[identity][version][verb][request id][arguments…]`.
struct RequestFrames {
    let identity: Data
    let verb: String
    let requestID: Data
    let arguments: [Data]

    struct Problem: Error {
        let code: String
        let message: String
        let requestID: Data
    }

    static func parse(_ frames: [Data]) -> Result<RequestFrames, Problem> {
        let requestID = frames.count > 3 ? frames[3] : Data()
        guard frames.count >= 4 else {
            return .failure(
                Problem(
                    code: "malformed-request",
                    message:
                        "a request has at least 3 frames (version, verb, request id); got \(max(0, frames.count - 1))",
                    requestID: requestID))
        }
        let version = String(decoding: frames[1], as: UTF8.self)
        guard frames[1] == Data(WireProtocol.version.utf8) else {
            let shown = version.count > 40 ? String(version.prefix(40)) + "…" : version
            return .failure(
                Problem(
                    code: "unsupported-protocol",
                    message: "unsupported protocol '\(shown)'; this bus speaks \(WireProtocol.version)",
                    requestID: requestID))
        }
        guard frames[3].count <= 64 else {
            return .failure(
                Problem(code: "malformed-request", message: "the request id is over 64 bytes", requestID: Data()))
        }
        return .success(
            RequestFrames(
                identity: frames[0], verb: String(decoding: frames[2], as: UTF8.self), requestID: frames[3],
                arguments: Array(frames.dropFirst(4))))
    }
}

extension DaemonState {
    func pong(head: UInt64) -> Bureau_Bus_Pong {
        var pong = Bureau_Bus_Pong()
        pong.head = head
        pong.epoch = epoch
        pong.pid = UInt32(bitPattern: pid)
        pong.version = version
        return pong
    }
}

extension Duration {
    /// Whole milliseconds, rounded down; negative durations give negative values.
    var milliseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}
