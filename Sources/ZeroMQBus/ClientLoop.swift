import BureauSchemas
import Bus
import Logging
import SwiftProtobuf
import Synchronization
import ZeroMQ

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The client's socket thread and the queue of commands other threads hand it.
///
/// Every socket of a ``ZeroMQBusClient`` lives on this thread. Callers enqueue a command and ring
/// ``wake``; replies come back through continuations and subscription channels.
final class ClientLoop: Sendable {
    enum Command: Sendable {
        case publish(PendingPublish)
        case cancelPublish(UInt64)
        case ping(PendingPing)
        case subscribe(SubscriptionRequest)
        case unsubscribe(Int)
        /// A consumer made room in its channel.
        case resume
    }

    struct PendingPublish: Sendable {
        let requestID: UInt64
        let frames: [Data]
        let deadline: ContinuousClock.Instant
        let continuation: CheckedContinuation<Bureau_Bus_PublishAck, any Error>
    }

    struct PendingPing: Sendable {
        let requestID: UInt64
        let deadline: ContinuousClock.Instant
        let continuation: CheckedContinuation<Bureau_Bus_Pong, any Error>
    }

    struct SubscriptionRequest: Sendable {
        let id: Int
        let filter: EventFilter
        let after: UInt64
        let channel: SubscriptionChannel
    }

    private struct Inbox {
        var commands: [Command] = []
        var closed = false
    }

    let wake: WakeSignal
    private let inbox = Mutex(Inbox())
    private let requestIDs: Atomic<UInt64>
    private let subscriptionIDs = Atomic<Int>(1)
    private let thread = Mutex<SocketThread?>(nil)

    init(endpoints: BusEndpoints, options: ZeroMQBusClient.Options, logger: Logger) throws {
        wake = try WakeSignal()
        var generator = SystemRandomNumberGenerator()
        requestIDs = Atomic(generator.next() >> 1)
        let context = try ZMQContext(ioThreads: 1)
        let worker = ReaderBox(
            try ClientWorker(context: context, endpoints: endpoints, options: options, logger: logger))
        let started = try SocketThread(name: "bureau-client") { [self] in
            worker.value.run(loop: self)
        }
        thread.withLock { $0 = started }
    }

    func nextRequestID() -> UInt64 {
        requestIDs.add(1, ordering: .relaxed).newValue
    }

    func nextSubscriptionID() -> Int {
        subscriptionIDs.add(1, ordering: .relaxed).newValue
    }

    /// Queues a command for the socket thread; false if the client is closed.
    @discardableResult
    func send(_ command: Command) -> Bool {
        let accepted = inbox.withLock { inbox -> Bool in
            guard !inbox.closed else { return false }
            inbox.commands.append(command)
            return true
        }
        if accepted { wake.ring() }
        return accepted
    }

    /// The commands queued since the last call, and whether the client is closing.
    func takeCommands() -> (commands: [Command], closed: Bool) {
        inbox.withLock { inbox in
            defer { inbox.commands = [] }
            return (inbox.commands, inbox.closed)
        }
    }

    /// Stops the socket thread; pending requests fail with ``BusError/closed``.
    func close() {
        let first = inbox.withLock { inbox -> Bool in
            defer { inbox.closed = true }
            return !inbox.closed
        }
        guard first else { return }
        wake.ring()
        let started = thread.withLock { thread -> SocketThread? in
            defer { thread = nil }
            return thread
        }
        started?.join()
    }
}

/// The state of the client's socket thread. Touched by that thread only.
final class ClientWorker {
    private let context: ZMQContext
    private let endpoints: BusEndpoints
    private let options: ZeroMQBusClient.Options
    private let logger: Logger
    private let ingress: ZMQSocket
    private let reader: ZMQSocket

    private var publishes: [UInt64: Publish] = [:]
    private var pings: [UInt64: ClientLoop.PendingPing] = [:]
    private var subscriptions: [Int: Subscription] = [:]
    private var subscriptionOrder: [Int] = []
    /// Reused by every publication received: the type frame and the meta frame.
    private var typeFrame: [UInt8] = []
    private var metaFrame: [UInt8] = []
    private let clock = ContinuousClock()

    private struct Publish {
        let pending: ClientLoop.PendingPublish
        var interval: Duration
        var nextAttempt: ContinuousClock.Instant
    }

    /// One subscription's socket and progress.
    private final class Subscription {
        let id: Int
        let socket: ZMQSocket
        let channel: SubscriptionChannel
        var tracker: SubscriptionTracker
        var readInFlight: (id: UInt64, sentAt: ContinuousClock.Instant)?
        /// A read could not be sent (no daemon connected): not before this instant again.
        var readRetryAt: ContinuousClock.Instant?
        var lastHeard: ContinuousClock.Instant
        var heartbeatInterval: Duration = .milliseconds(500)
        var connected: Bool?

        init(
            id: Int, socket: ZMQSocket, channel: SubscriptionChannel, tracker: SubscriptionTracker,
            now: ContinuousClock.Instant
        ) {
            self.id = id
            self.socket = socket
            self.channel = channel
            self.tracker = tracker
            lastHeard = now
        }
    }

    init(context: ZMQContext, endpoints: BusEndpoints, options: ZeroMQBusClient.Options, logger: Logger) throws {
        self.context = context
        self.endpoints = endpoints
        self.options = options
        self.logger = logger
        ingress = try context.socket(.dealer)
        reader = try context.socket(.dealer)
        for socket in [ingress, reader] {
            try configure(socket)
            try socket.setSendHighWaterMark(100_000)
            try socket.setReceiveHighWaterMark(100_000)
        }
        try ingress.connect(endpoints.ingress)
        try reader.connect(endpoints.read)
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
            var subscriptionItems: [(Int, Subscription)] = []
            for id in subscriptionOrder {
                guard let subscription = subscriptions[id] else { continue }
                if subscription.tracker.isLive && subscription.channel.hasRoom {
                    subscriptionItems.append((poller.add(subscription.socket), subscription))
                }
            }
            do {
                try poller.poll(timeout: nextTimeout())
            } catch {
                logger.error("the bus client's poll failed", metadata: ["error": "\(error)"])
                return
            }
            if poller.isReadable(wakeItem) {
                loop.wake.drain()
                let (commands, closed) = loop.takeCommands()
                // Taken in even when closing, so that shutting down answers every waiter.
                for command in commands { handle(command) }
                if closed { return }
            }
            if poller.isReadable(ingressItem) { receiveAcknowledgements() }
            if poller.isReadable(readerItem) { receiveReadReplies() }
            for (item, subscription) in subscriptionItems where poller.isReadable(item) {
                receivePublications(subscription)
            }
            checkTimers()
            requestReads()
        }
    }

    // MARK: Commands

    private func handle(_ command: ClientLoop.Command) {
        switch command {
        case .publish(let pending):
            let interval = options.firstRetry
            publishes[pending.requestID] = Publish(
                pending: pending, interval: interval, nextAttempt: clock.now + interval)
            _ = try? ingress.send(multipart: pending.frames, wait: false)
        case .cancelPublish(let id):
            publishes.removeValue(forKey: id)?.pending.continuation.resume(throwing: CancellationError())
        case .ping(let pending):
            pings[pending.requestID] = pending
            let frames = [
                Data(WireProtocol.version.utf8), Data(WireProtocol.ping.utf8),
                WireProtocol.requestID(pending.requestID),
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
                try socket.connect(endpoints.events)
                subscriptions[request.id] = Subscription(
                    id: request.id, socket: socket, channel: request.channel,
                    tracker: SubscriptionTracker(filter: request.filter, after: request.after), now: clock.now)
                subscriptionOrder.append(request.id)
            } catch {
                request.channel.push([.failure(.socket("cannot subscribe to \(endpoints.events): \(error)"))])
                request.channel.finish()
            }
        case .unsubscribe(let id):
            if let subscription = subscriptions.removeValue(forKey: id) {
                subscription.socket.close()
                subscription.channel.finish()
                subscriptionOrder.removeAll { $0 == id }
            }
        case .resume:
            break
        }
    }

    // MARK: Replies

    private func receiveAcknowledgements() {
        while let frames = try? ingress.receiveMessage(wait: false) {
            guard frames.count >= 4, let id = WireProtocol.parseRequestID(frames[2]),
                let publish = publishes[id]
            else { continue }
            let verb = String(decoding: frames[1], as: UTF8.self)
            switch verb {
            case WireProtocol.ack:
                guard let ack = PublishAckEncoding.decode(frames[3]) else { continue }
                publishes.removeValue(forKey: id)
                publish.pending.continuation.resume(returning: ack)
            case WireProtocol.error:
                let error = try? Bureau_Bus_ErrorReply(serializedBytes: frames[3])
                publishes.removeValue(forKey: id)
                publish.pending.continuation.resume(
                    throwing: BusError.refused(code: error?.code ?? "unknown", message: error?.message ?? ""))
            default:
                continue
            }
        }
    }

    private func receiveReadReplies() {
        while let frames = try? reader.receiveMessage(wait: false) {
            guard frames.count >= 4, let id = WireProtocol.parseRequestID(frames[2]) else { continue }
            let verb = String(decoding: frames[1], as: UTF8.self)
            if let ping = pings.removeValue(forKey: id) {
                if verb == WireProtocol.pong, let pong = try? Bureau_Bus_Pong(serializedBytes: frames[3]) {
                    ping.continuation.resume(returning: pong)
                } else {
                    let error = try? Bureau_Bus_ErrorReply(serializedBytes: frames[3])
                    ping.continuation.resume(
                        throwing: BusError.refused(code: error?.code ?? verb, message: error?.message ?? ""))
                }
                continue
            }
            guard
                let subscription = subscriptions.values.first(where: { $0.readInFlight?.id == id })
            else { continue }
            subscription.readInFlight = nil
            heard(from: subscription)
            guard verb == WireProtocol.events, let header = try? Bureau_Bus_ReadReply(serializedBytes: frames[3]) else {
                let error = try? Bureau_Bus_ErrorReply(serializedBytes: frames[3])
                logger.warning(
                    "a catch-up read failed; retrying",
                    metadata: ["code": "\(error?.code ?? verb)", "message": "\(error?.message ?? "")"])
                // Ask again after the read timeout rather than at once.
                subscription.readInFlight = (id, clock.now)
                continue
            }
            let bodies = frames.dropFirst(4)
            let positions = bodies.map { body in (try? EnvelopeScanner.scan(body))?.position ?? 0 }
            let (deliver, caughtUp) = subscription.tracker.readReply(
                positions: positions, scannedTo: header.scannedTo, head: header.head)
            var items: [SubscriptionChannel.Item] = []
            items.reserveCapacity(deliver.count + 1)
            for index in deliver {
                items.append(.event(position: positions[index], envelope: bodies[bodies.startIndex + index]))
            }
            if caughtUp { items.append(.caughtUp(head: subscription.tracker.cursor)) }
            subscription.channel.push(items)
        }
    }

    /// Receives what the bus published for `subscription`: `[type][meta][envelope]` per event and
    /// `[_heartbeat][Heartbeat]`; other shapes are passed over.
    ///
    /// The type and meta frames go into buffers the worker reuses, so an event costs one
    /// allocation (its envelope), not four.
    private func receivePublications(_ subscription: Subscription) {
        var items: [SubscriptionChannel.Item] = []
        defer { subscription.channel.push(items) }
        let socket = subscription.socket
        for _ in 0..<4096 {
            guard let typeMore = try? socket.receiveFrame(into: &typeFrame, wait: false) else { return }
            guard typeMore, let metaMore = try? socket.receiveFrame(into: &metaFrame) else { continue }
            if !metaMore {
                guard typeFrame.elementsEqual(WireProtocol.heartbeatTopic.utf8),
                    let heartbeat = try? Bureau_Bus_Heartbeat(serializedBytes: metaFrame)
                else { continue }
                if heartbeat.intervalMs > 0 { subscription.heartbeatInterval = .milliseconds(heartbeat.intervalMs) }
                items += heard(from: subscription, pushing: false)
                let heads = Dictionary(
                    heartbeat.packageHeads.map { ($0.package, $0.position) }, uniquingKeysWith: { max($0, $1) })
                let action = subscription.tracker.heartbeat(
                    head: heartbeat.head, epochStart: heartbeat.epochStart, packageHeads: heads)
                if action == .fetch {
                    subscription.channel.gaps.add(1, ordering: .relaxed)
                    return
                }
                continue
            }
            guard let (envelope, envelopeMore) = try? socket.receiveFrame() else { continue }
            if envelopeMore {
                try? socket.skipRestOfMessage()
                continue
            }
            guard let meta = WireProtocol.parseMeta(metaFrame) else { continue }
            let action = typeFrame.withUnsafeBytes { type in
                subscription.tracker.publication(
                    position: meta.position, previousInPackage: meta.previousInPackage, type: type,
                    bodyOmitted: envelope.isEmpty)
            }
            switch action {
            case .deliver:
                items.append(.event(position: meta.position, envelope: envelope))
                if items.count >= subscription.channel.capacity { return }
            case .skip:
                continue
            case .fetch:
                subscription.channel.gaps.add(1, ordering: .relaxed)
                return
            }
        }
    }

    /// Notes that the bus answered a subscription; returns a connection item if that is news.
    @discardableResult
    private func heard(from subscription: Subscription, pushing: Bool = true) -> [SubscriptionChannel.Item] {
        subscription.lastHeard = clock.now
        guard subscription.connected != true else { return [] }
        subscription.connected = true
        if pushing {
            subscription.channel.push([.connection(true)])
            return []
        }
        return [.connection(true)]
    }

    // MARK: Timers

    /// How soon a read that could not be sent is tried again.
    static let readRetryInterval: Duration = .milliseconds(100)

    private func nextTimeout() -> Int {
        var next = clock.now + .seconds(1)
        for publish in publishes.values {
            next = min(next, publish.nextAttempt, publish.pending.deadline)
        }
        for ping in pings.values {
            next = min(next, ping.deadline)
        }
        for subscription in subscriptions.values {
            // Once it is known to be disconnected, the heartbeat deadline lies in the past for
            // good; waking for it would spin.
            if subscription.connected != false {
                next = min(next, subscription.lastHeard + subscription.heartbeatInterval * 3)
            }
            if let retry = subscription.readRetryAt { next = min(next, retry) }
            if let read = subscription.readInFlight {
                next = min(next, read.sentAt + options.readTimeout)
            }
        }
        return max(0, (next - clock.now).milliseconds + 1)
    }

    private func checkTimers() {
        let now = clock.now
        for (id, publish) in publishes {
            if now >= publish.pending.deadline {
                publishes.removeValue(forKey: id)
                publish.pending.continuation.resume(
                    throwing: BusError.noAnswer(endpoint: endpoints.ingress, seconds: options.publishTimeout.seconds))
            } else if now >= publish.nextAttempt {
                // The same request id and envelopes: the daemon recognises what it already committed.
                _ = try? ingress.send(multipart: publish.pending.frames, wait: false)
                var updated = publish
                updated.interval = min(publish.interval * 2, options.maxRetry)
                updated.nextAttempt = now + updated.interval
                publishes[id] = updated
            }
        }
        for (id, ping) in pings where now >= ping.deadline {
            pings.removeValue(forKey: id)
            ping.continuation.resume(throwing: BusError.noAnswer(endpoint: endpoints.read, seconds: 0))
        }
        for subscription in subscriptions.values {
            if let read = subscription.readInFlight, now - read.sentAt >= options.readTimeout {
                subscription.readInFlight = nil
            }
            if subscription.connected != false, now - subscription.lastHeard >= subscription.heartbeatInterval * 3 {
                subscription.connected = false
                subscription.channel.push([.connection(false)])
            }
        }
    }

    /// Sends a read for every subscription that is catching up, has room, and has none in flight.
    private func requestReads() {
        for id in subscriptionOrder {
            guard let subscription = subscriptions[id], !subscription.tracker.isLive,
                subscription.readInFlight == nil, subscription.channel.hasRoom,
                subscription.readRetryAt.map({ clock.now >= $0 }) ?? true
            else { continue }
            var request = Bureau_Bus_ReadRequest()
            request.after = subscription.tracker.cursor
            request.maxEvents = UInt32(min(BusLimits.maxReadEvents, subscription.channel.capacity))
            request.typePrefixes = subscription.tracker.filter.prefixes
            guard let body = try? request.serializedData() else { continue }
            let requestID = UInt64.random(in: 1...UInt64.max >> 1)
            let frames = [
                Data(WireProtocol.version.utf8), Data(WireProtocol.read.utf8), WireProtocol.requestID(requestID), body,
            ]
            if (try? reader.send(multipart: frames, wait: false)) == true {
                subscription.readInFlight = (requestID, clock.now)
                subscription.readRetryAt = nil
            } else {
                subscription.readRetryAt = clock.now + Self.readRetryInterval
            }
        }
    }

    private func shutDown() {
        for publish in publishes.values { publish.pending.continuation.resume(throwing: BusError.closed) }
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
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
