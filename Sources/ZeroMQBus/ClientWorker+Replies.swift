import BureauSchemas
import Bus
import Guards
import Logging
import SwiftProtobuf
import ZeroMQ

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the worker reads from its sockets: publish acknowledgements, the answers to reads and
/// pings, and the publications of each subscription.
extension ClientWorker {

    func receiveAcknowledgements() {
        while let frames = received(.acknowledgement, { try ingress.receiveMessage(wait: false) }) {
            guard frames.count >= 4, let id = WireProtocol.parseRequestID(frames[2]),
                let publish = publishes[id]
            else { continue }
            let verb = String(decoding: frames[1], as: UTF8.self)
            switch verb {
            case WireProtocol.ack:
                publishes.removeValue(forKey: id)
                timers.publishSettled(id)
                guard let ack = PublishAckEncoding.decode(frames[3]) else {
                    // Said now, rather than resent until the deadline calls the bus silent.
                    publish.continuation.resume(
                        throwing: BusError.unexpectedAnswer("an acknowledgement that is not a PublishAck"))
                    continue
                }
                publish.continuation.resume(returning: ack)
            case WireProtocol.error:
                let error = try? Bureau_Bus_ErrorReply(serializedBytes: frames[3])
                publishes.removeValue(forKey: id)
                timers.publishSettled(id)
                publish.continuation.resume(
                    throwing: error.map { BusError.refused(code: BusErrorCode(rawValue: $0.code), message: $0.message) }
                        ?? BusError.unexpectedAnswer("an error reply that is not an ErrorReply"))
            default:
                continue
            }
        }
    }

    /// Takes every reply waiting on the read socket: a ping's answer, or a catch-up read's.
    func receiveReadReplies() {
        while let frames = received(.readReply, { try reader.receiveMessage(wait: false) }) {
            guard frames.count >= 4, let id = WireProtocol.parseRequestID(frames[2]) else { continue }
            let verb = String(decoding: frames[1], as: UTF8.self)
            if let ping = pings.removeValue(forKey: id) {
                settle(ping, id: id, verb: verb, body: frames[3])
            } else {
                readReply(frames, id: id, verb: verb)
            }
        }
    }

    /// A ping's answer: the reply asked for, or the bus's refusal, or what this client cannot use.
    func settle(_ ping: ClientLoop.PendingPing, id: UInt64, verb: String, body: Data) {
        timers.pingSettled(id)
        guard verb != ping.replyVerb else {
            ping.continuation.resume(returning: body)
            return
        }
        let error = try? Bureau_Bus_ErrorReply(serializedBytes: body)
        ping.continuation.resume(
            throwing: error.map { BusError.refused(code: BusErrorCode(rawValue: $0.code), message: $0.message) }
                ?? BusError.unexpectedAnswer("a '\(verb)' reply where '\(ping.replyVerb)' was asked for"))
    }

    /// A catch-up read's reply: its events delivered to the subscription in order, or the read
    /// asked again (a refusal, a reply that cannot be read), or the subscription ended (the bus's
    /// log ends before it, or the bus keeps serving what this client cannot read).
    func readReply(_ frames: [Data], id: UInt64, verb: String) {
        // A read that timed out is answered by its reply all the same while the subscription
        // is where it asked from; once it has got on, the reply is stale.
        guard let read = timers.read(answeredBy: id), let subscription = subscriptions[read.subscription],
            !read.late || read.after == subscription.tracker.cursor
        else { return }
        let subscriptionID = read.subscription
        guard verb == WireProtocol.events, let header = try? Bureau_Bus_ReadReply(serializedBytes: frames[3]) else {
            let error = verb == WireProtocol.error ? try? Bureau_Bus_ErrorReply(serializedBytes: frames[3]) : nil
            if let error, error.code == BusErrorCode.aheadOfLog.rawValue {
                end(subscriptionID, aheadOf: error.head, epoch: error.epoch)
                return
            }
            perform(timers.readRefused(for: subscriptionID, requestID: id, now: clock.now))
            if let error {
                logger.warning(
                    "a catch-up read failed; retrying",
                    metadata: ["error.code": "\(error.code)", "error.message": "\(error.message)"])
            } else {
                // This client's own failure to read the answer, not a code the bus sent.
                let answer =
                    switch verb {
                    case WireProtocol.events: "an 'events' reply whose header is not a ReadReply"
                    case WireProtocol.error: "an error reply that is not an ErrorReply"
                    default: "a '\(verb)' reply where '\(WireProtocol.events)' was asked for"
                    }
                logger.warning(
                    "a catch-up read got an unexpected answer; retrying", metadata: ["bus.answer": "\(answer)"])
            }
            return
        }
        guard let bodies = Self.envelopes(of: frames, batched: header.batched) else {
            // Refused while still in flight, so that it is asked again after the read timeout,
            // not at once.
            perform(timers.readRefused(for: subscriptionID, requestID: id, now: clock.now))
            logger.warning("a catch-up read's reply is not one batch of envelopes; reading again")
            return
        }
        let positions: [UInt64]
        switch Self.positions(of: bodies) {
        case .success(let scanned):
            positions = scanned
        case .failure(let unreadable):
            subscription.unreadableReplies += 1
            if subscription.unreadableReplies >= Self.unreadableRepliesBeforeFailing {
                fail(
                    subscriptionID,
                    BusError.unexpectedAnswer(
                        "\(subscription.unreadableReplies) catch-up replies in a row after position "
                            + "\(subscription.tracker.cursor) held an envelope that cannot be read "
                            + "(\(unreadable.reason)); the bus serves what this client cannot read"))
                return
            }
            perform(timers.readRefused(for: subscriptionID, requestID: id, now: clock.now))
            logger.warning(
                "an envelope of a catch-up read's reply cannot be read; reading again",
                metadata: ["bus.reply.index": "\(unreadable.index)", "bus.reply.error": "\(unreadable.reason)"])
            return
        }
        subscription.unreadableReplies = 0
        perform(timers.readAnswered(for: subscriptionID, now: clock.now))
        // A daemon from before `ahead-of-log` answers such a read with nothing, and its head.
        if subscription.tracker.isAhead(ofHead: header.head) {
            end(subscriptionID, aheadOf: header.head, epoch: 0)
            return
        }
        let (deliver, caughtUp) = subscription.tracker.readReply(
            positions: positions, scannedTo: header.scannedTo, head: header.head)
        var items: [SubscriptionChannel.Item] = []
        items.reserveCapacity(deliver.count + 1)
        for index in deliver {
            items.append(.event(position: positions[index], envelope: bodies[index]))
        }
        if caughtUp { items.append(.caughtUp(head: subscription.tracker.cursor)) }
        subscription.channel.push(items)
        subscription.channel.advance(through: subscription.tracker.cursor, live: subscription.tracker.isLive)
    }

    /// A read reply's envelopes: slices of its one batch frame when it was asked for batched
    /// (see `requestReads`), else a frame each (a daemon from before batched replies); nil for a
    /// batch frame that is not one.
    static func envelopes(of frames: [Data], batched: Bool) -> [Data]? {
        guard batched else { return Array(frames.dropFirst(4)) }
        guard frames.count == 5,
            case .success(let envelopes) = WireProtocol.envelopes(
                inBatch: frames[4], maxEnvelopes: BusLimits.maxReadEvents)
        else { return nil }
        return envelopes
    }

    /// An envelope of a read reply that does not scan, and why.
    struct UnreadableEnvelope: Error {
        let index: Int
        let reason: String
    }

    /// Each envelope's position. An envelope that does not scan has no position to deliver it at:
    /// taken as position 0 it would pass as already delivered, and the event be lost unsaid; the
    /// reply is read again instead.
    static func positions(of bodies: [Data]) -> Result<[UInt64], UnreadableEnvelope> {
        var positions: [UInt64] = []
        positions.reserveCapacity(bodies.count)
        for (index, body) in bodies.enumerated() {
            do {
                guard let position = try EnvelopeScanner.scan(body).position else {
                    return .failure(UnreadableEnvelope(index: index, reason: "it has no position"))
                }
                positions.append(position)
            } catch {
                return .failure(UnreadableEnvelope(index: index, reason: "\(error)"))
            }
        }
        return .success(positions)
    }

    /// Receives what the bus published for `subscription`: `[type][events]` (``PublicationFrame``)
    /// and `[_heartbeat][Heartbeat]`; other shapes are passed over.
    ///
    /// The type frame goes into a buffer the worker reuses, and each event's envelope is a slice
    /// of its message's frame, so a message costs one allocation however many events it holds.
    /// A message is taken whole even past the channel's capacity (by at most one message), so
    /// that stopping for room never drops the rest of it.
    func receivePublications(_ subscription: Subscription) {
        var items: [SubscriptionChannel.Item] = []
        defer {
            subscription.channel.push(items)
            subscription.channel.advance(through: subscription.tracker.cursor, live: subscription.tracker.isLive)
        }
        let socket = subscription.socket
        for _ in 0..<1024 {
            guard let typeMore = received(.publication, { try socket.receiveFrame(into: &typeFrame, wait: false) })
            else { return }
            guard typeMore, let (frame, frameMore) = received(.publication, { try socket.receiveFrame() }) else {
                continue
            }
            if frameMore {
                _ = received(.publication, { try socket.skipRestOfMessage() })
                continue
            }
            if typeFrame.elementsEqual(WireProtocol.heartbeatTopic.utf8) {
                let heartbeat: Bureau_Bus_Heartbeat
                do {
                    heartbeat = try Bureau_Bus_Heartbeat(serializedBytes: frame)
                } catch {
                    // Without its heartbeats the bus will look silent; say why, once a subscription.
                    if !subscription.unreadableHeartbeatSaid {
                        subscription.unreadableHeartbeatSaid = true
                        logger.warning(
                            "a heartbeat from the bus cannot be read; passed over",
                            metadata: ["bus.bytes": "\(frame.count)", "error.description": "\(error)"])
                    }
                    continue
                }
                let interval = Duration.milliseconds(heartbeat.intervalMs)
                // Pushed with the batch at the end, not on its own.
                if case .connected = timers.heartbeat(for: subscription.id, interval: interval, now: clock.now) {
                    items.append(.connection(true))
                }
                let heads = Dictionary(
                    heartbeat.packageHeads.map { ($0.package, $0.position) }, uniquingKeysWith: { max($0, $1) })
                let action = subscription.tracker.heartbeat(
                    head: heartbeat.head, epochStart: heartbeat.epochStart, packageHeads: heads)
                if action == .fetch {
                    subscription.channel.gaps.add(1, ordering: .relaxed)
                    subscription.gapNoticed = true
                    return
                }
                continue
            }
            guard let entries = frame.withUnsafeBytes({ PublicationFrame.entries($0) }) else { continue }
            let start = frame.startIndex
            for entry in entries {
                let action = typeFrame.withUnsafeBytes { type in
                    subscription.tracker.publication(
                        position: entry.position, previousInPackage: entry.previousInPackage, type: type,
                        bodyOmitted: entry.envelope.isEmpty)
                }
                switch action {
                case .deliver:
                    let envelope = frame[start + entry.envelope.lowerBound..<start + entry.envelope.upperBound]
                    items.append(.event(position: entry.position, envelope: envelope))
                case .skip:
                    continue
                case .fetch:
                    subscription.channel.gaps.add(1, ordering: .relaxed)
                    subscription.gapNoticed = true
                    return
                }
            }
            if items.count >= subscription.channel.capacity { return }
        }
        return
    }
}
