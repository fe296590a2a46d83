import BureauSchemas
import Bus
import EventLog
import Logging
import SwiftProtobuf
import ZeroMQ

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Serves reads of the log to subscribers catching up, on a thread of its own.
///
/// Reads go no further than the published head (committed, and handed to the live stream), so
/// a subscriber never sees from the log an event that is not committed, and a subscriber that
/// has a live event always finds the log reaching it. Each reply is bounded in events and bytes
/// (flow control: the subscriber asks for the next chunk when it has room).
final class CatchUpServer {
    private let sockets: [ZMQSocket]
    private let reader: any EventLogReader
    private let state: DaemonState
    private let stop: WakeSignal
    private let logger: Logger
    private var badInput: BadInputLog

    init(sockets: [ZMQSocket], reader: any EventLogReader, state: DaemonState, stop: WakeSignal, logger: Logger) {
        self.sockets = sockets
        self.reader = reader
        self.state = state
        self.stop = stop
        self.logger = logger
        badInput = BadInputLog(logger: logger)
    }

    func run() {
        defer {
            for socket in sockets { socket.close() }
        }
        var poller = ZMQPoller()
        let items = sockets.map { poller.add($0) }
        let stopItem = poller.add(fileDescriptor: stop.fileDescriptor)
        while true {
            do {
                try poller.poll(timeout: 5000)
                if poller.isReadable(stopItem) { return }
                for (index, item) in items.enumerated() where poller.isReadable(item) {
                    // Serve a few requests per socket per turn so that one busy client cannot starve the rest.
                    for _ in 0..<16 {
                        guard let frames = try sockets[index].receiveMessage(wait: false) else { break }
                        serve(frames, on: sockets[index])
                    }
                }
                badInput.summarizeIfDue()
            } catch let error as ZMQError where error.contextTerminated {
                return
            } catch {
                logger.error("the catch-up server failed", metadata: ["bus.error": "\(error)"])
                return
            }
        }
    }

    private func serve(_ frames: [Data], on socket: ZMQSocket) {
        switch RequestFrames.parse(frames) {
        case .failure(let problem):
            badInput.record(problem.message, socket: "read")
            send(
                on: socket, problem.identity, WireProtocol.error, problem.requestID,
                [errorReply(problem.code, problem.message)])
        case .success(let request):
            switch request.verb {
            case WireProtocol.read:
                guard request.arguments.count == 1,
                    let read = try? Bureau_Bus_ReadRequest(serializedBytes: request.arguments[0])
                else {
                    let message = "a read request carries one ReadRequest frame"
                    badInput.record(message, socket: "read")
                    send(
                        on: socket, request.identity, WireProtocol.error, request.requestID,
                        [errorReply("malformed-request", message)])
                    return
                }
                let head = state.publishedHead.load(ordering: .acquiring)
                guard read.after <= head else {
                    // The reader has what this log never published: another log, or an older copy.
                    var error = Bureau_Bus_ErrorReply()
                    error.code = WireProtocol.aheadOfLog
                    error.message =
                        "a read after position \(read.after), but the log ends at position \(head) "
                        + "(daemon epoch \(state.epoch)): this is not the log the reader read"
                    error.head = head
                    error.epoch = state.epoch
                    send(
                        on: socket, request.identity, WireProtocol.error, request.requestID,
                        [(try? error.serializedData()) ?? Data()])
                    return
                }
                do {
                    var (header, bodies) = try answer(read)
                    // One frame for the lot when the client can take it: a frame per envelope cost
                    // libzmq's threads and the client a message part each.
                    header.batched = read.batched
                    send(
                        on: socket, request.identity, WireProtocol.events, request.requestID,
                        [try header.serializedData()] + (read.batched ? [WireProtocol.batch(bodies)] : bodies))
                } catch {
                    logger.error("could not read the log", metadata: ["bus.error": "\(error)"])
                    send(
                        on: socket, request.identity, WireProtocol.error, request.requestID,
                        [errorReply("read-failed", "could not read the log: \(error)")])
                }
            case WireProtocol.ping:
                let pong =
                    (try? state.pong(head: state.publishedHead.load(ordering: .acquiring)).serializedData()) ?? Data()
                send(on: socket, request.identity, WireProtocol.pong, request.requestID, [pong])
            default:
                let message = "unknown verb '\(request.verb)' on the read socket: use read or ping"
                badInput.record(message, socket: "read")
                send(
                    on: socket, request.identity, WireProtocol.error, request.requestID,
                    [errorReply("unknown-verb", message)])
            }
        }
    }

    /// Reads what a request asks for, filtering by type if it names prefixes.
    func answer(_ request: Bureau_Bus_ReadRequest) throws -> (Bureau_Bus_ReadReply, [Data]) {
        let through = state.publishedHead.load(ordering: .acquiring)
        let maxEvents =
            request.maxEvents == 0
            ? BusLimits.maxReadEvents : min(Int(request.maxEvents), BusLimits.maxReadEvents)
        let maxBytes =
            request.maxBytes == 0 ? BusLimits.maxReadBytes : min(Int(request.maxBytes), BusLimits.maxReadBytes)
        let filter = EventFilter(prefixes: request.typePrefixes)
        var reply = Bureau_Bus_ReadReply()
        reply.head = through
        reply.scannedTo = request.after
        var bodies: [Data] = []
        var bytes = 0
        var scanned = 0
        guard request.after < through else { return (reply, bodies) }
        var after = request.after
        reading: while after < through, scanned < BusLimits.maxReadScan {
            let records = try reader.read(
                after: after, through: through, limit: filter.prefixes.isEmpty ? maxEvents : 1024, maxBytes: maxBytes)
            guard let last = records.last else { break }
            for record in records {
                scanned += 1
                if filter.matches(envelope: record.body) {
                    bodies.append(record.body)
                    bytes += record.body.count
                }
                reply.scannedTo = record.position
                if bodies.count >= maxEvents || bytes >= maxBytes { break reading }
            }
            after = last.position
        }
        // Everything up to the published head is in the log; a read that finds nothing there
        // would have the subscriber ask again forever.
        if reply.scannedTo == request.after {
            throw EventLogError.corruptRecord(
                segment: "", offset: 0, position: request.after + 1,
                reason: "position \(request.after + 1) is committed but could not be read")
        }
        return (reply, bodies)
    }

    private func errorReply(_ code: String, _ message: String) -> Data {
        var error = Bureau_Bus_ErrorReply()
        error.code = code
        error.message = message
        return (try? error.serializedData()) ?? Data()
    }

    private func send(on socket: ZMQSocket, _ identity: Data, _ verb: String, _ requestID: Data, _ frames: [Data]) {
        _ = try? socket.send(
            multipart: [identity, Data(WireProtocol.version.utf8), Data(verb.utf8), requestID] + frames, wait: false)
    }
}
