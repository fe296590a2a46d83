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

/// The state of the client's socket thread. Touched by that thread only.
///
/// It owns the sockets, the waiting callers' continuations and the subscriptions' channels;
/// when to send again, give up or report a connection is ``ClientTimers``'s to decide, and the
/// worker performs what it says.
final class ClientWorker {
    private let context: ZMQContext
    private let endpoints: BusEndpoints
    private let options: ZeroMQBusClient.Options
    private let logger: Logger
    private let ingress: ZMQSocket
    private let reader: ZMQSocket
    /// PAIR sockets receiving the ingress and read sockets' monitor events; none over ipc.
    private var monitors: [ZMQSocket] = []
    /// What the monitors have shown about reaching a TCP bus; nil over ipc.
    private var diagnosis: ConnectionDiagnosis?

    private var publishes: [UInt64: ClientLoop.PendingPublish] = [:]
    private var pings: [UInt64: ClientLoop.PendingPing] = [:]
    private var subscriptions: [Int: Subscription] = [:]
    private var subscriptionOrder: [Int] = []
    private var timers: ClientTimers
    /// Reused by every publication received: the type frame.
    private var typeFrame: [UInt8] = []
    /// Receives that failed in a row (not "nothing waiting"), one streak for each kind of
    /// socket: said when they start, not each turn, whatever the other sockets do.
    private var receiveFailures = [FailureStreak](repeating: FailureStreak(), count: Received.allCases.count)
    private let clock = ContinuousClock()

    /// One subscription's socket and progress.
    private final class Subscription {
        let id: Int
        let socket: ZMQSocket
        let channel: SubscriptionChannel
        var tracker: SubscriptionTracker
        /// It noticed a gap while live: its next read says so (the daemon counts them).
        var gapNoticed = false
        /// Replies in a row that held an envelope it could not read: past a few, the subscription
        /// fails, saying where, rather than ask for ever.
        var unreadableReplies = 0
        /// A heartbeat it could not read has been logged: said once a subscription.
        var unreadableHeartbeatSaid = false

        init(id: Int, socket: ZMQSocket, channel: SubscriptionChannel, tracker: SubscriptionTracker) {
            self.id = id
            self.socket = socket
            self.channel = channel
            self.tracker = tracker
        }
    }

    init(context: ZMQContext, endpoints: BusEndpoints, options: ZeroMQBusClient.Options, logger: Logger) throws {
        self.context = context
        self.endpoints = endpoints
        self.options = options
        self.logger = logger
        timers = ClientTimers(
            firstRetry: options.firstRetry, maxRetry: options.maxRetry, readTimeout: options.readTimeout)
        ingress = try context.socket(.dealer)
        reader = try context.socket(.dealer)
        for socket in [ingress, reader] {
            try configure(socket)
            try socket.setSendHighWaterMark(100_000)
            try socket.setReceiveHighWaterMark(100_000)
        }
        if endpoints.ingress.hasPrefix("tcp://") {
            // Watched before connecting, so that the first attempt is seen too.
            diagnosis = ConnectionDiagnosis(usesCurve: options.curve != nil)
            let tag = UInt64.random(in: 0...UInt64.max)
            for (name, socket) in [("ingress", ingress), ("read", reader)] {
                let address = "inproc://bureau-client-monitor-\(tag)-\(name)"
                try socket.monitor(address)
                let pair = try context.socket(.pair)
                try pair.setLinger(milliseconds: 0)
                try pair.connect(address)
                monitors.append(pair)
            }
        }
        if endpoints.alternates?.isEmpty == false {
            // Requests only to daemons that are there: a standby binds nothing until it takes
            // over, and a request queued for it would wait until then.
            try ingress.setImmediate(true)
            try reader.setImmediate(true)
        }
        for daemon in endpoints.all {
            try ingress.connect(daemon.ingress)
            try reader.connect(daemon.read)
        }
    }

    private func configure(_ socket: ZMQSocket) throws {
        try socket.setLinger(milliseconds: 0)
        try socket.setReconnectInterval(milliseconds: 50, max: 1000)
        if let curve = options.curve {
            try socket.setCurveClient(serverKey: curve.serverKey, keys: curve.keys)
        }
    }

    func run(loop: ClientLoop) {
        defer { shutDown() }
        while true {
            var poller = ZMQPoller()
            let ingressItem = poller.add(ingress)
            let readerItem = poller.add(reader)
            let wakeItem = poller.add(fileDescriptor: loop.wake.fileDescriptor)
            let monitorItems = monitors.map { poller.add($0) }
            var subscriptionItems: [(Int, Subscription)] = []
            for id in subscriptionOrder {
                guard let subscription = subscriptions[id] else { continue }
                if subscription.tracker.isLive && subscription.channel.hasRoom {
                    subscriptionItems.append((poller.add(subscription.socket), subscription))
                }
            }
            do {
                let now = clock.now
                try poller.poll(timeout: Self.pollTimeout(until: timers.nextWake(after: now), now: now))
            } catch {
                logger.error("the bus client's poll failed", metadata: ["error.description": "\(error)"])
                return
            }
            if poller.isReadable(wakeItem) {
                loop.wake.drain()
                let (commands, closed) = loop.takeCommands()
                // Taken in even when closing, so that shutting down answers every waiter.
                for command in commands { handle(command) }
                if closed { return }
            }
            for (item, monitor) in zip(monitorItems, monitors) where poller.isReadable(item) {
                receiveMonitorEvents(monitor)
            }
            if poller.isReadable(ingressItem) { receiveAcknowledgements() }
            if poller.isReadable(readerItem) { receiveReadReplies() }
            // Not one that the commands or the replies above ended (its socket is closed).
            for (item, subscription) in subscriptionItems
            where poller.isReadable(item) && subscriptions[subscription.id] === subscription {
                receivePublications(subscription)
            }
            for action in timers.advance(to: clock.now) { perform(action) }
            requestReads()
        }
    }

    /// Milliseconds for the poll to wait from `now` until `wake`: rounded up past it (a poll
    /// that returned a moment early would find nothing due and poll again at once), and 0 if
    /// `wake` has passed.
    static func pollTimeout(until wake: ContinuousClock.Instant, now: ContinuousClock.Instant) -> Int {
        Int(max(0, (wake - now).inMilliseconds + 1))
    }

    // MARK: Commands

    private func handle(_ command: ClientLoop.Command) {
        // The bus has refused this client for good: what is asked now fails at once, with why,
        // as what was waiting did.
        if let verdict = diagnosis?.verdict {
            let error = BusError.connectionRefused(endpoint: endpoints.ingress, reason: verdict)
            switch command {
            case .publish(let pending): return pending.continuation.resume(throwing: error)
            case .ping(let pending): return pending.continuation.resume(throwing: error)
            case .report: return
            case .subscribe(let request):
                request.channel.push([.failure(error)])
                return request.channel.finish()
            case .cancelPublish, .unsubscribe, .resume: break
            }
        }
        switch command {
        case .publish(let pending):
            publishes[pending.requestID] = pending
            timers.publishSent(pending.requestID, deadline: pending.deadline, now: clock.now)
            // Not sent now (no connection yet, a full queue): the timers send it again, and
            // fail it with the reason at its deadline.
            _ = try? ingress.send(multipart: pending.frames, wait: false)
        case .cancelPublish(let id):
            timers.publishSettled(id)
            publishes.removeValue(forKey: id)?.continuation.resume(throwing: CancellationError())
        case .ping(let pending):
            pings[pending.requestID] = pending
            timers.pingSent(pending.requestID, deadline: pending.deadline)
            let frames = [
                Data(WireProtocol.version.utf8), Data(pending.verb.utf8),
                WireProtocol.requestID(pending.requestID),
            ]
            // Not sent now: the ping fails at its deadline, saying the bus did not answer.
            _ = try? reader.send(multipart: frames, wait: false)
        case .report(let body):
            // Not answered, and not sent again: the next report, a second later, says more.
            let frames = [
                Data(WireProtocol.version.utf8), Data(WireProtocol.report.utf8), WireProtocol.requestID(0), body,
            ]
            _ = try? reader.send(multipart: frames, wait: false)
        case .subscribe(let request):
            do {
                let socket = try context.socket(.sub)
                try configure(socket)
                try socket.setReceiveHighWaterMark(options.subscriberHighWaterMark)
                try socket.subscribe(request.filter.subscriptionPrefix)
                if !request.filter.subscriptionPrefix.isEmpty {
                    try socket.subscribe(WireProtocol.heartbeatTopic)
                }
                for daemon in endpoints.all { try socket.connect(daemon.events) }
                subscriptions[request.id] = Subscription(
                    id: request.id, socket: socket, channel: request.channel,
                    tracker: SubscriptionTracker(filter: request.filter, after: request.after))
                timers.subscribed(request.id, now: clock.now)
                subscriptionOrder.append(request.id)
            } catch {
                request.channel.push([.failure(.socket("cannot subscribe to \(endpoints.events): \(error)"))])
                request.channel.finish()
            }
        case .unsubscribe(let id):
            if let subscription = subscriptions.removeValue(forKey: id) {
                timers.unsubscribed(id)
                subscription.socket.close()
                subscription.channel.finish()
                subscriptionOrder.removeAll { $0 == id }
            }
        case .resume:
            break
        }
    }

    /// What a socket of the client receives, for what it says when receiving fails.
    private enum Received: Int, CaseIterable, CustomStringConvertible {
        case acknowledgement, readReply, publication, connectionEvent

        var description: String {
            switch self {
            case .acknowledgement: "an acknowledgement"
            case .readReply: "a read reply"
            case .publication: "a publication"
            case .connectionEvent: "a connection event"
            }
        }
    }

    /// What `receive` took from a socket the poll found readable, or nil: nothing waiting, the
    /// context ending (the client is closing), or a failure, which is said at error level when
    /// a streak of them starts on that kind of socket: a socket that fails every turn would
    /// otherwise turn a refused key or a broken connection into a timeout with no reason.
    private func received<Value>(_ what: Received, _ receive: () throws -> Value?) -> Value? {
        do {
            let value = try receive()
            if value != nil, receiveFailures[what.rawValue].count > 0 {
                let failures = receiveFailures[what.rawValue].succeeded()
                logger.notice("the bus client receives \(what) again after \(counted(failures, "failure"))")
            }
            return value
        } catch let error as ZMQError where error.contextTerminated {
            return nil
        } catch {
            if receiveFailures[what.rawValue].failed() {
                let endpoint =
                    switch what {
                    case .readReply: endpoints.read
                    case .publication: endpoints.events
                    case .acknowledgement, .connectionEvent: endpoints.ingress
                    }
                logger.error(
                    "the bus client cannot receive \(what)",
                    metadata: ["bus.endpoint": "\(endpoint)", "error.description": "\(error)"])
            }
            return nil
        }
    }

    // MARK: Replies

    private func receiveAcknowledgements() {
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
    private func receiveReadReplies() {
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
    private func settle(_ ping: ClientLoop.PendingPing, id: UInt64, verb: String, body: Data) {
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
    private func readReply(_ frames: [Data], id: UInt64, verb: String) {
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
    private static func envelopes(of frames: [Data], batched: Bool) -> [Data]? {
        guard batched else { return Array(frames.dropFirst(4)) }
        guard frames.count == 5,
            case .success(let envelopes) = WireProtocol.envelopes(
                inBatch: frames[4], maxEnvelopes: BusLimits.maxReadEvents)
        else { return nil }
        return envelopes
    }

    /// An envelope of a read reply that does not scan, and why.
    private struct UnreadableEnvelope: Error {
        let index: Int
        let reason: String
    }

    /// Each envelope's position. An envelope that does not scan has no position to deliver it at:
    /// taken as position 0 it would pass as already delivered, and the event be lost unsaid; the
    /// reply is read again instead.
    private static func positions(of bodies: [Data]) -> Result<[UInt64], UnreadableEnvelope> {
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
    private func receivePublications(_ subscription: Subscription) {
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

    // MARK: Connection

    /// Takes in what a monitor reports; when it shows the client can never get in, fails every
    /// waiting publish, ping and subscription with the reason instead of letting them time out.
    private func receiveMonitorEvents(_ monitor: ZMQSocket) {
        while let frames = received(.connectionEvent, { try monitor.receiveMessage(wait: false) }) {
            guard let event = ZMQMonitorEvent.decode(frames),
                let reason = diagnosis?.record(event)
            else { continue }
            logger.error(
                "cannot use the bus",
                metadata: ["bus.endpoint": "\(endpoints.ingress)", "error.description": "\(reason)"])
            refuseEverything(BusError.connectionRefused(endpoint: endpoints.ingress, reason: reason))
        }
    }

    /// How many replies in a row may hold an envelope that cannot be read before the
    /// subscription fails.
    static let unreadableRepliesBeforeFailing = 3

    /// Ends a subscription whose cursor is past the bus's head: it fails with
    /// ``BusError/aheadOfLog(position:head:epoch:)``, after what it was already given.
    private func end(_ id: Int, aheadOf head: UInt64, epoch: UInt64) {
        guard let position = subscriptions[id]?.tracker.cursor else { return }
        logger.error(
            "the bus's log ends before what this subscriber has read; the subscription ends",
            metadata: ["bus.position": "\(position)", "bus.head": "\(head)", "bus.epoch": "\(epoch)"])
        fail(id, .aheadOfLog(position: position, head: head, epoch: epoch))
    }

    /// Ends subscription `id` with `error`, after what it was already given.
    private func fail(_ id: Int, _ error: BusError) {
        guard let subscription = subscriptions.removeValue(forKey: id) else { return }
        timers.unsubscribed(id)
        subscriptionOrder.removeAll { $0 == id }
        if case .aheadOfLog = error {
        } else {
            logger.error("the subscription ends", metadata: ["bus.error": "\(error)"])
        }
        subscription.socket.close()
        subscription.channel.push([.failure(error)])
        subscription.channel.finish()
    }

    private func refuseEverything(_ error: BusError) {
        for (id, publish) in publishes {
            timers.publishSettled(id)
            publish.continuation.resume(throwing: error)
        }
        for (id, ping) in pings {
            timers.pingSettled(id)
            ping.continuation.resume(throwing: error)
        }
        publishes = [:]
        pings = [:]
        for id in subscriptionOrder {
            guard let subscription = subscriptions.removeValue(forKey: id) else { continue }
            timers.unsubscribed(id)
            subscription.socket.close()
            subscription.channel.push([.failure(error)])
            subscription.channel.finish()
        }
        subscriptionOrder = []
    }

    /// What a request that got no answer from `endpoint` fails with: the monitor's reason when
    /// it knows why, else ``BusError/noAnswer(endpoint:seconds:)``.
    private func unanswered(_ endpoint: String, seconds: Double) -> BusError {
        guard let reason = diagnosis?.explanation else { return .noAnswer(endpoint: endpoint, seconds: seconds) }
        return .connectionFailed(endpoint: endpoint, reason: reason)
    }

    // MARK: Timers

    /// Does what the timers say is due.
    private func perform(_ action: ClientTimers.Action?) {
        switch action {
        case .resendPublish(let id):
            // The same request id and envelopes: the daemon recognises what it already committed.
            guard let pending = publishes[id] else { return }
            _ = try? ingress.send(multipart: pending.frames, wait: false)
        case .failPublish(let id):
            publishes.removeValue(forKey: id)?.continuation.resume(
                throwing: unanswered(endpoints.ingress, seconds: options.publishTimeout.inSeconds))
        case .failPing(let id):
            pings.removeValue(forKey: id)?.continuation.resume(
                throwing: unanswered(endpoints.read, seconds: 0))
        case .readTimedOut:
            // No longer in flight: requestReads sends it again.
            break
        case .disconnected(let id):
            subscriptions[id]?.channel.push([.connection(false)])
        case .connected(let id):
            subscriptions[id]?.channel.push([.connection(true)])
        case nil:
            break
        }
    }

    /// Sends a read for every subscription that is catching up, has room, and has none in flight.
    private func requestReads() {
        for id in subscriptionOrder {
            guard let subscription = subscriptions[id], !subscription.tracker.isLive,
                timers.mayRequestRead(for: id, now: clock.now), subscription.channel.hasRoom
            else { continue }
            var request = Bureau_Bus_ReadRequest()
            request.after = subscription.tracker.cursor
            request.maxEvents = UInt32(min(BusLimits.maxReadEvents, subscription.channel.capacity))
            request.typePrefixes = subscription.tracker.filter.prefixes
            request.batched = true
            request.afterGap = subscription.gapNoticed
            // Proto3 scalars do not fail to encode; if one did, the read is asked again next turn.
            guard let body = try? request.serializedData() else { continue }
            let requestID = UInt64.random(in: 1...UInt64.max >> 1)
            let frames = [
                Data(WireProtocol.version.utf8), Data(WireProtocol.read.utf8), WireProtocol.requestID(requestID), body,
            ]
            if (try? reader.send(multipart: frames, wait: false)) == true {
                subscription.gapNoticed = false
                timers.readSent(for: id, requestID: requestID, after: request.after, now: clock.now)
            } else {
                timers.readNotSent(for: id, now: clock.now)
            }
        }
    }

    private func shutDown() {
        for publish in publishes.values { publish.continuation.resume(throwing: BusError.closed) }
        for ping in pings.values { ping.continuation.resume(throwing: BusError.closed) }
        publishes = [:]
        pings = [:]
        for subscription in subscriptions.values {
            subscription.socket.close()
            subscription.channel.finish()
        }
        subscriptions = [:]
        ingress.close()
        reader.close()
        for monitor in monitors { monitor.close() }
    }
}
