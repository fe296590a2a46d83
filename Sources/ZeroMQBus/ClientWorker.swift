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
    let context: ZMQContext
    let endpoints: BusEndpoints
    let options: ZeroMQBusClient.Options
    let logger: Logger
    let ingress: ZMQSocket
    let reader: ZMQSocket
    /// PAIR sockets receiving the ingress and read sockets' monitor events; none over ipc.
    var monitors: [ZMQSocket] = []
    /// What the monitors have shown about reaching a TCP bus; nil over ipc.
    var diagnosis: ConnectionDiagnosis?

    var publishes: [UInt64: ClientLoop.PendingPublish] = [:]
    var pings: [UInt64: ClientLoop.PendingPing] = [:]
    var subscriptions: [Int: Subscription] = [:]
    var subscriptionOrder: [Int] = []
    var timers: ClientTimers
    /// Reused by every publication received: the type frame.
    var typeFrame: [UInt8] = []
    /// Receives that failed in a row (not "nothing waiting"), one streak for each kind of
    /// socket: said when they start, not each turn, whatever the other sockets do.
    var receiveFailures = [FailureStreak](repeating: FailureStreak(), count: Received.allCases.count)
    /// Sends that failed in a row on each endpoint's socket (the socket closed, not "not sent
    /// now"), and what the last one said: the reason a request to it that then gets no answer
    /// fails with. An endpoint is here only during a streak, so a send checks an empty table.
    var sendFailures: [String: FailureStreak] = [:]
    var lastSendFailure: [String: String] = [:]
    let clock = ContinuousClock()

    /// One subscription's socket and progress.
    final class Subscription {
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

    func configure(_ socket: ZMQSocket) throws {
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

    func handle(_ command: ClientLoop.Command) {
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
            send(pending.frames, on: ingress, to: endpoints.ingress)
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
            send(frames, on: reader, to: endpoints.read)
        case .report(let body):
            // Not answered, and not sent again: the next report, a second later, says more.
            let frames = [
                Data(WireProtocol.version.utf8), Data(WireProtocol.report.utf8), WireProtocol.requestID(0), body,
            ]
            send(frames, on: reader, to: endpoints.read)
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
    enum Received: Int, CaseIterable, CustomStringConvertible {
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

    /// Sends a request's frames without waiting; false when they are not sent now (no connection
    /// yet, a full queue: the timers send them again or fail the request). A send that fails
    /// outright is said at error level when a streak of them starts, and kept as the reason a
    /// request that then gets no answer fails with (``unanswered(_:seconds:)``).
    @discardableResult
    func send(_ frames: [Data], on socket: ZMQSocket, to endpoint: String) -> Bool {
        do {
            let sent = try socket.send(multipart: frames, wait: false)
            if sent, !sendFailures.isEmpty, let streak = sendFailures.removeValue(forKey: endpoint) {
                lastSendFailure[endpoint] = nil
                logger.notice(
                    "the bus client sends again after \(counted(streak.count, "failure"))",
                    metadata: ["bus.endpoint": "\(endpoint)"])
            }
            return sent
        } catch let error as ZMQError where error.contextTerminated {
            return false
        } catch {
            lastSendFailure[endpoint] = "\(error)"
            if sendFailures[endpoint, default: FailureStreak()].failed() {
                logger.error(
                    "the bus client cannot send",
                    metadata: ["bus.endpoint": "\(endpoint)", "error.description": "\(error)"])
            }
            return false
        }
    }

    /// What `receive` took from a socket the poll found readable, or nil: nothing waiting, the
    /// context ending (the client is closing), or a failure, which is said at error level when
    /// a streak of them starts on that kind of socket: a socket that fails every turn would
    /// otherwise turn a refused key or a broken connection into a timeout with no reason.
    func received<Value>(_ what: Received, _ receive: () throws -> Value?) -> Value? {
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
}
