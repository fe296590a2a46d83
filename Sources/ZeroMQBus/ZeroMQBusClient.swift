import BureauSchemas
import Bus
import EventLog
import Guards
import Logging
import ZeroMQ

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A client of a `bureau bus` daemon over ZeroMQ: the ``EventBus`` every process uses.
///
/// Thread-safe; share one per process. The client's sockets live on a thread of its own
/// (libzmq sockets must stay on one thread); calls hand it work and await the answer.
public final class ZeroMQBusClient: EventBus {
    public struct Options: Sendable {
        /// The process name stamped on every envelope as its producer.
        public var process: String
        /// How long a publish waits for an acknowledgement, over all its retries.
        public var publishTimeout: Duration = .seconds(10)
        /// The first retry of an unanswered publish; later ones double, up to ``maxRetry``.
        public var firstRetry: Duration = .milliseconds(250)
        public var maxRetry: Duration = .seconds(2)
        /// How many requests of one ``ZeroMQBusClient/publish(_:)`` may be in flight at once
        /// (each of at most ``BusLimits/maxEnvelopesPerPublish`` events); they are stored in
        /// order whatever happens to the connection (README, "Publishing").
        public var requestsInFlight = 4
        /// An unanswered catch-up read is sent again after this long.
        public var readTimeout: Duration = .seconds(2)
        /// Publication messages (each up to ``BusLimits/maxPublicationFrameBytes`` of events) a
        /// subscriber socket queues before libzmq drops them (the log fills the gap).
        public var subscriberHighWaterMark: Int32 = 1000
        /// Set to reach a daemon over CURVE-encrypted TCP.
        public var curve: Curve?
        /// How this client's subscriptions read events: through these upcasters (a composition
        /// root gives its build's), or as stored (none).
        public var upcasting: EventUpcasting = .none

        public struct Curve: Sendable {
            public var serverKey: String
            public var keys: CurveKeyPair

            public init(serverKey: String, keys: CurveKeyPair) {
                self.serverKey = serverKey
                self.keys = keys
            }
        }

        public init(process: String) {
            self.process = process
        }
    }

    public let endpoints: BusEndpoints
    public let options: Options
    private let loop: ClientLoop

    public var process: String { options.process }

    public init(endpoints: BusEndpoints, options: Options, logger: Logger) throws {
        self.endpoints = endpoints
        self.options = options
        loop = try ClientLoop(endpoints: endpoints, options: options, logger: logger)
    }

    /// A client of the bus of the deployment at `location`.
    public convenience init(
        location: BusLocation, options: Options, logger: Logger
    )
        throws
    {
        if let problem = location.socketPathProblem { throw BusError.unusableLocation(problem) }
        let endpoints = location.endpoints { problem in
            logger.warning(
                "the bus's address file cannot be read; trying the data directory's ipc sockets",
                metadata: ["bus.problem": "\(problem)"])
        }
        try self.init(endpoints: endpoints, options: options, logger: logger)
    }

    /// A client of a bus on another machine, over TCP (CURVE when `remote` has keys).
    public convenience init(remote: RemoteBus, options: Options, logger: Logger) throws {
        var options = options
        options.curve = remote.curve
        try self.init(endpoints: remote.endpoints, options: options, logger: logger)
    }

    deinit {
        loop.close()
    }

    /// Stops the client: pending calls fail with ``BusError/closed`` and subscriptions end.
    public func close() {
        loop.close()
    }

    // MARK: Publishing

    /// Publishes events and returns, in the same order, what the bus did with each.
    ///
    /// Unanswered requests are sent again with the same ids, so an event is committed at most
    /// once however many times it is sent. Throws ``BusError/noAnswer(endpoint:seconds:)`` if
    /// no daemon answers within ``Options/publishTimeout``.
    public func publish(_ events: [OutgoingEvent]) async throws -> [PublishOutcome] {
        // Up to ``Options/requestsInFlight`` requests in flight, each sent while the one before
        // it is unanswered naming that one (`follows`): the daemon stores a request only after
        // the one it follows, so a request lost with a connection and sent again can never land
        // behind a later one, and the events of a publish keep their order. A request refused
        // `out-of-order` is sent again, following nothing, once every request before it is
        // answered. Events are encoded a request's worth at a time, while others are in flight,
        // and each frame is let go once its request is answered.
        let chunk = BusLimits.maxEnvelopesPerPublish
        var requests: [Request] = []
        var nextChunk = 0
        func request(_ index: Int) -> Request? {
            while index >= requests.count, nextChunk < events.count {
                let start = nextChunk
                nextChunk = min(start + chunk, events.count)
                for batch in WireProtocol.publishBatches(events[start..<nextChunk], process: options.process) {
                    requests.append(Request(id: loop.nextRequestID(), frame: batch.frame, count: batch.count))
                }
            }
            return index < requests.count ? requests[index] : nil
        }
        var window = max(1, options.requestsInFlight)
        var outcomes: [PublishOutcome] = []
        outcomes.reserveCapacity(events.count)
        try await withThrowingTaskGroup(of: (Int, Result<Bureau_Bus_PublishAck, any Error>).self) { group in
            var sent = 0
            var answered = 0
            var arrived: [Int: Result<Bureau_Bus_PublishAck, any Error>] = [:]
            while true {
                // The answers that arrived, in order, first: a refused request is sent again
                // before any later one is sent following it.
                while let arrival = arrived.removeValue(forKey: answered) {
                    var answer = arrival
                    if case .failure(BusError.refused(let code, _)) = answer, answered > 0,
                        code == .outOfOrder || code == .malformedRequest
                    {
                        // Every request before it is answered now: what it followed is stored
                        // or never will be. (`malformed-request`: a daemon from before `follows`
                        // refuses the frame; from here on, one request at a time.)
                        if code == .malformedRequest { window = 1 }
                        let again = Request(
                            id: loop.nextRequestID(), frame: requests[answered].frame, count: requests[answered].count)
                        answer = await attempt(again, follows: nil)
                    }
                    let ack = try answer.get()
                    let count = requests[answered].count
                    guard ack.results.count == count else {
                        throw BusError.unexpectedAnswer("\(ack.results.count) results for \(count) events")
                    }
                    outcomes += try ack.results.map(PublishOutcome.init)
                    requests[answered].frame = Data()
                    answered += 1
                }
                while sent - answered < window, let next = request(sent) {
                    let follows = sent > answered ? requests[sent - 1].id : nil
                    let index = sent
                    group.addTask { (index, await self.attempt(next, follows: follows)) }
                    sent += 1
                }
                guard answered < sent else { break }
                guard let (index, result) = try await group.next() else {
                    throw BusError.unexpectedAnswer("a publish request ended without an answer")
                }
                arrived[index] = result
            }
        }
        return outcomes
    }

    /// ``send(batch:id:follows:)`` for `request`, its error kept rather than thrown.
    private func attempt(_ request: Request, follows: UInt64?) async -> Result<Bureau_Bus_PublishAck, any Error> {
        do {
            return .success(try await send(batch: request.frame, id: request.id, follows: follows))
        } catch {
            return .failure(error)
        }
    }

    /// One publish request of a ``publish(_:)``: its id, its batch frame (emptied once it is
    /// answered) and how many events it holds.
    private struct Request {
        let id: UInt64
        var frame: Data
        let count: Int
    }

    /// Sends producer envelopes as they are, for tools that relay bytes.
    public func publish(envelopes: [Data]) async throws -> Bureau_Bus_PublishAck {
        try await send(batch: WireProtocol.batch(envelopes), id: loop.nextRequestID(), follows: nil)
    }

    /// Sends one publish request whose argument is `batch` (``WireProtocol/batch(_:)``),
    /// to be stored only after the request `follows`, if given.
    private func send(batch: Data, id: UInt64, follows: UInt64?) async throws -> Bureau_Bus_PublishAck {
        // The daemon's socket drops a peer that sends a larger frame, without an answer.
        guard batch.count <= BusLimits.maxRequestBytes else {
            throw BusError.requestTooLarge(bytes: batch.count, limit: BusLimits.maxRequestBytes)
        }
        var frames = [
            Data(WireProtocol.version.utf8), Data(WireProtocol.publish.utf8), WireProtocol.requestID(id), batch,
        ]
        if let follows { frames.append(WireProtocol.requestID(follows)) }
        let deadline = ContinuousClock.now + options.publishTimeout
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let pending = ClientLoop.PendingPublish(
                    requestID: id, frames: frames, deadline: deadline, continuation: continuation)
                if !loop.send(.publish(pending)) { continuation.resume(throwing: BusError.closed) }
            }
        } onCancel: {
            loop.send(.cancelPublish(id))
        }
    }

    // MARK: Status

    /// Asks the daemon whether it is up; throws ``BusError/noAnswer(endpoint:seconds:)`` after `timeout`.
    public func ping(timeout: Duration) async throws -> BusStatus {
        let body = try await ask(WireProtocol.ping, answeredWith: WireProtocol.pong, timeout: timeout)
        guard let pong = try? Bureau_Bus_Pong(serializedBytes: body) else {
            throw BusError.unexpectedAnswer("an answer to a ping that is not a Pong")
        }
        return BusStatus(head: pong.head, epoch: pong.epoch, pid: Int32(bitPattern: pong.pid), version: pong.version)
    }

    /// Sends `verb` on the read socket and returns the body of the reply `replyVerb`; throws
    /// ``BusError/noAnswer(endpoint:seconds:)`` after `timeout`, and the bus's refusal as it came.
    private func ask(_ verb: String, answeredWith replyVerb: String, timeout: Duration) async throws -> Data {
        let id = loop.nextRequestID()
        let deadline = ContinuousClock.now + timeout
        do {
            return try await withCheckedThrowingContinuation { continuation in
                let pending = ClientLoop.PendingPing(
                    requestID: id, deadline: deadline, verb: verb, replyVerb: replyVerb, continuation: continuation)
                if !loop.send(.ping(pending)) { continuation.resume(throwing: BusError.closed) }
            }
        } catch BusError.noAnswer(let endpoint, _) {
            throw BusError.noAnswer(endpoint: endpoint, seconds: timeout.inSeconds)
        }
    }

    /// Tells the daemon how far this process's consumers have got; nothing is awaited (a report
    /// lost is made good by the next one).
    public func report(_ progress: [Bureau_Bus_ConsumerProgress]) {
        var report = Bureau_Bus_ProgressReport()
        report.consumers = progress
        guard !progress.isEmpty, let body = try? report.serializedData() else { return }
        loop.send(.report(body))
    }

    /// The daemon's figures and every consumer as it sees them; throws
    /// ``BusError/noAnswer(endpoint:seconds:)`` after `timeout`.
    public func statistics(timeout: Duration) async throws -> Bureau_Bus_BusStats {
        let body: Data
        do {
            body = try await ask(WireProtocol.stats, answeredWith: WireProtocol.stats, timeout: timeout)
        } catch BusError.refused(let code, _) where code == .unknownVerb {
            throw BusError.refused(
                code: code, message: "the bus is older than `stats`: it keeps no figures to show; upgrade it")
        }
        guard let stats = try? Bureau_Bus_BusStats(serializedBytes: body) else {
            throw BusError.unexpectedAnswer("an answer to stats that is not a BusStats")
        }
        return stats
    }

    // MARK: Subscribing

    /// Every committed event that matches `filter` with a position after `position`, in order and
    /// exactly once: first read from the log, then followed live; a gap is filled from the log
    /// before anything newer is delivered.
    ///
    /// - Parameter bufferCapacity: how many events may wait for the consumer before the client
    ///   stops reading for it (it then catches up from the log when the consumer has room).
    public func subscribe(_ filter: EventFilter, after position: UInt64, bufferCapacity: Int) -> EventSubscription {
        let id = loop.nextSubscriptionID()
        let loop = self.loop
        let channel = SubscriptionChannel(capacity: max(1, bufferCapacity), after: position) { loop.send(.resume) }
        let request = ClientLoop.SubscriptionRequest(
            id: id, filter: options.upcasting.widening(filter), after: position, channel: channel)
        if !loop.send(.subscribe(request)) {
            channel.push([.failure(.closed)])
            channel.finish()
        }
        return EventSubscription(channel: channel, upcasting: options.upcasting) { loop.send(.unsubscribe(id)) }
    }
}
