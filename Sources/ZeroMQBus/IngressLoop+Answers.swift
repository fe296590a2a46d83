import BureauSchemas
import Bus
import Guards
import SwiftProtobuf
import ZeroMQ

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the loop says: acknowledgements, refusals, the heartbeat, its own reports.
extension IngressLoop {
    /// Hands memory freed since the last time back to the system (a subscriber that left frees
    /// its queue), at most every few seconds.
    func trimMemoryIfDue() {
        guard ContinuousClock.now - lastTrim >= .seconds(5) else { return }
        lastTrim = .now
        HeapMemory.releaseFreed()
    }

    /// `received`, after a request of the daemon's own `reports` if there are any.
    func withReports(_ reports: [OutgoingEvent], _ received: [Request]) -> [Request] {
        // envelopeBytes writes the bytes by hand and does not fail; the throws is its signature's.
        let own = reports.compactMap { try? $0.envelopeBytes(process: reporter.process) }
        return own.isEmpty ? received : [Request.own(own)] + received
    }

    /// What the bus says on the bus once a full disk has passed.
    func diskFullReport() -> String {
        let seconds = (ContinuousClock.now - diskFullSince).inWholeSeconds
        return "the log could not store publishes for \(seconds) s (disk full); \(refusedWhileFull) request(s) "
            + "were refused, and it stores them again"
    }

    /// The acknowledgement of each request; `remembering` keeps the answers that a retry must
    /// get again (a refusal that may not hold later).
    func acknowledgements(
        of requests: [Request], _ results: [[Bureau_Bus_PublishResult]], head: UInt64, remembering: Bool = false
    ) -> [Answer] {
        var acknowledgements: [Answer] = []
        acknowledgements.reserveCapacity(requests.count)
        for (request, list) in zip(requests, results) where !request.isOwn {
            let body = PublishAckEncoding.encode(list, head: head)
            if remembering {
                self.answers.remember(
                    body, to: request.requestID, fingerprint: RequestAnswerCache.fingerprint(of: request.envelopes))
            }
            acknowledgements.append(
                Answer(socket: request.socket, identity: request.identity, requestID: request.requestID, body: body))
        }
        return acknowledgements
    }

    func publishHeartbeat() throws {
        var heartbeat = Bureau_Bus_Heartbeat()
        // What is published, not what is written: a subscriber that saw a higher head would
        // fetch positions that the catch-up server does not serve before they are published.
        heartbeat.head = publishedHead
        heartbeat.epochStart = sequencer.epochStart
        heartbeat.epoch = state.epoch
        heartbeat.intervalMs = UInt32(clamping: heartbeatInterval.inMilliseconds)
        heartbeat.packageHeads = publishedPackageHeads.sorted { $0.key < $1.key }.map { package, position in
            var head = Bureau_Bus_PackageHead()
            head.package = package
            head.position = position
            return head
        }
        let body = try heartbeat.serializedData()
        let send = publisher()
        let failuresBefore = publicationFailures.count
        body.withUnsafeBytes { send(Data(WireProtocol.heartbeatTopic.utf8), $0) }
        publicationsSent(failuresBefore: failuresBefore)
    }

    /// Answers a request with an `error` reply: `code` (README, "Other requests and errors")
    /// and what the client is told.
    func refuse(
        on socket: ZMQSocket, to identity: Data, requestID: Data, _ code: BusErrorCode, _ message: String
    ) {
        state.metrics.refused(code: code)
        reply(on: socket, to: identity, verb: WireProtocol.error, requestID: requestID) {
            var error = Bureau_Bus_ErrorReply()
            error.code = code.rawValue
            error.message = message
            return error
        }
    }

    /// Sends a reply; a peer that has gone away or stopped reading is skipped, never waited for.
    func reply(
        on socket: ZMQSocket, to identity: Data, verb: String, requestID: Data,
        _ message: () throws -> some SwiftProtobuf.Message
    ) {
        // Proto3 messages do not fail to encode; one that did would go unanswered, and counted.
        guard let body = try? message().serializedData() else {
            state.metrics.repliesUnsent.increment()
            return
        }
        let sent = try? socket.send(
            multipart: [identity, Data(WireProtocol.version.utf8), Data(verb.utf8), requestID, body], wait: false)
        if sent != true { state.metrics.repliesUnsent.increment() }
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
