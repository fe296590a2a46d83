import Bus
import ZeroMQ

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Taking requests in: reading a socket within the wake-up's budget, checking each request's
/// frames, answering pings and bad input at once.
extension IngressLoop {
    /// Receives the requests waiting on one socket; answers pings and bad input at once.
    func drain(socket index: Int, into pending: inout [Request], budget: inout Budget) throws {
        let socket = ingress[index]
        var messages = 0
        while !budget.exhausted, messages < maxMessagesPerDrain, let received = try receiveRequest(on: socket) {
            messages += 1
            switch received {
            case .failure(let problem):
                badInput.record(problem.message, socket: "ingress")
                refuse(on: socket, to: problem.identity, requestID: problem.requestID, problem.code, problem.message)
            case .success(let request):
                switch request.verb {
                case WireProtocol.publish:
                    let envelopes: EnvelopeBatch
                    let follows: UInt64?
                    switch publishEnvelopes(request) {
                    case .success(let split):
                        (envelopes, follows) = split
                    case .failure(let refusal):
                        // An error, not an ack of one rejection per envelope: the request may
                        // hold any number of envelopes, and the answer must stay small.
                        badInput.record(refusal.message, socket: "ingress")
                        refuse(
                            on: socket, to: request.identity, requestID: request.requestID, refusal.code,
                            refusal.message)
                        continue
                    }
                    if !answers.isEmpty,
                        let answer = answers.answer(
                            to: request.requestID, fingerprint: RequestAnswerCache.fingerprint(of: envelopes))
                    {
                        // A retry of a request refused for a full disk: the same refusal, so that
                        // an event answered REJECTED cannot be committed by a retry still in flight.
                        // Behind what is held: the answer may say DUPLICATE of an event whose
                        // commit has not finished.
                        hold(
                            WrittenBatch(
                                head: publishedHead, packageHeads: publishedPackageHeads, events: 0,
                                answers: [
                                    Answer(
                                        socket: index, identity: request.identity, requestID: request.requestID,
                                        body: answer)
                                ]))
                        continue
                    }
                    pending.append(
                        Request(
                            socket: index, identity: request.identity, requestID: request.requestID,
                            envelopes: envelopes, follows: follows))
                    budget.events -= envelopes.count
                    budget.bytes -= request.argumentBytes
                case WireProtocol.ping:
                    reply(on: socket, to: request.identity, verb: WireProtocol.pong, requestID: request.requestID) {
                        state.pong(head: publishedHead)
                    }
                default:
                    let message = "unknown verb '\(request.verb)' on the ingress socket: use publish or ping"
                    badInput.record(message, socket: "ingress")
                    refuse(on: socket, to: request.identity, requestID: request.requestID, .unknownVerb, message)
                }
            }
        }
    }

    /// The envelopes of a publish request's batch frame and the request it follows (its
    /// optional second frame), or why it is refused whole: not one or two frames, a second
    /// frame that is not a request id, too many envelopes or bytes, or a batch cut short.
    func publishEnvelopes(_ request: RequestFrames) -> Result<(EnvelopeBatch, follows: UInt64?), Refusal> {
        if request.argumentBytes > BusLimits.maxRequestBytes {
            return .failure(
                Refusal(
                    code: .tooLarge,
                    message: "a publish request carries at most \(BusLimits.maxRequestBytes) bytes of envelopes, "
                        + "not \(request.argumentBytes): send fewer envelopes per request"))
        }
        guard (1...2).contains(request.frameCount), request.arguments.count == request.frameCount,
            let batch = request.arguments.first
        else {
            return .failure(
                Refusal(
                    code: .malformedRequest,
                    message: "a \(WireProtocol.version) publish request carries one batch frame of envelopes "
                        + "(and, optionally, the id of the request it follows), not \(request.frameCount) frames"))
        }
        var follows: UInt64?
        if request.frameCount == 2 {
            let frame = request.arguments[1]
            guard let id = WireProtocol.parseRequestID(frame) else {
                return .failure(
                    Refusal(
                        code: .malformedRequest,
                        message: "a publish request's second frame is the id of the request it follows: "
                            + "\(WireProtocol.requestIDBytes) bytes, not \(frame.count)"))
            }
            follows = id
        }
        switch WireProtocol.envelopeRanges(inBatch: batch, maxEnvelopes: BusLimits.maxEnvelopesPerPublish) {
        case .success(let envelopes) where envelopes.isEmpty:
            return .failure(Refusal(code: .malformedRequest, message: RequestFrames.noEnvelopes))
        case .success(let envelopes):
            return .success((EnvelopeBatch(bytes: batch, envelopes: envelopes), follows))
        case .failure(let problem):
            switch problem {
            case .tooMany: return .failure(Refusal(code: .tooLarge, message: problem.description))
            case .cutShort, .lengthCutShort:
                return .failure(Refusal(code: .malformedRequest, message: problem.description))
            }
        }
    }

    /// Receives one request, keeping its argument frames only while they fit the request
    /// limits: past them the frames are read and dropped, so an oversized request costs no
    /// more memory than a valid one.
    func receiveRequest(on socket: ZMQSocket) throws -> Result<RequestFrames, RequestFrames.Problem>? {
        guard let first = try socket.receiveFrame(wait: false) else { return nil }
        var header = [first.bytes]
        var more = first.more
        while more, header.count < 4, let frame = try socket.receiveFrame(limit: 1024) {
            header.append(frame.bytes ?? Data())
            more = frame.more
        }
        var arguments: [Data] = []
        var count = 0
        var bytes = 0
        while more, let frame = try socket.receiveFrame(limit: BusLimits.maxRequestBytes - bytes) {
            count += 1
            bytes += frame.size
            if let kept = frame.bytes, count <= BusLimits.maxEnvelopesPerPublish,
                bytes <= BusLimits.maxRequestBytes
            {
                arguments.append(kept)
            } else {
                arguments = []
            }
            more = frame.more
        }
        return RequestFrames.parse(header, arguments: arguments, frameCount: count, argumentBytes: bytes)
    }

    /// The requests that may be appended now (``RecentRequests``); the others are answered
    /// `out-of-order` at once and nothing of them is stored, so that a producer with several
    /// requests in flight never has one stored before the one it sent first (a request lost with
    /// a connection and sent again would otherwise land behind the next).
    func inOrder(_ requests: [Request]) -> [Request] {
        let admitted = recentRequests.admit(
            requests.map { ($0.isOwn ? nil : WireProtocol.parseRequestID($0.requestID), $0.follows) })
        guard admitted.contains(false) else { return requests }
        var inOrder: [Request] = []
        inOrder.reserveCapacity(requests.count)
        for (request, admitted) in zip(requests, admitted) {
            guard !admitted else {
                inOrder.append(request)
                continue
            }
            refuse(
                on: ingress[request.socket], to: request.identity, requestID: request.requestID,
                .outOfOrder,
                "not stored: the request this one follows has not reached the bus (or was long ago); "
                    + "send it again, following nothing, once the request before it is answered")
        }
        return inOrder
    }
}
