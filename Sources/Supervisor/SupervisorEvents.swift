import Bus
import EventLog
import Guards
import Logging
import SwiftProtobuf
import Synchronization
import ZeroMQBus

/// Publishes the supervisor's events — `ProcessStarted` / `ProcessExited`, and an `ErrorRaised`
/// for a process left crash-looping — in order, once the bus is up; keeps them while the bus is
/// down (a crashed bus is itself a process) and retries with the same ids, backing off, so that
/// each lands once. Only an event the bus refuses for good is dropped, at error level.
final class SupervisorEvents: Sendable {
    /// How the supervisor reports errors on the bus, as every module does.
    static let errors = ErrorReporter(module: "supervisor", process: "supervisor")

    private let makeClient: @Sendable (ZeroMQBusClient.Options) throws -> ZeroMQBusClient
    private let logger: Logger
    private let queue: AsyncStream<OutgoingEvent>.Continuation
    private let stream: AsyncStream<OutgoingEvent>
    private let state = Mutex<(client: ZeroMQBusClient?, worker: Task<Void, Never>?)>((nil, nil))
    /// Events queued and not yet published or given up on, and who waits for none to be left.
    private let pending = Mutex<(count: Int, waiters: [CheckedContinuation<Void, Never>], finished: Bool)>(
        (0, [], false))

    /// - Parameter makeClient: a client of the deployment's bus, with these options.
    init(logger: Logger, makeClient: @escaping @Sendable (ZeroMQBusClient.Options) throws -> ZeroMQBusClient) {
        self.makeClient = makeClient
        self.logger = logger
        (stream, queue) = AsyncStream.makeStream(of: OutgoingEvent.self)
    }

    func publish(_ message: some SwiftProtobuf.Message) {
        do {
            publish(try OutgoingEvent(message, module: "supervisor"))
        } catch {
            logger.error(
                "a supervisor event could not be encoded and is not published",
                metadata: ["event.type": "\(type(of: message).protoMessageName)", "supervisor.error": "\(error)"])
        }
    }

    /// Queues `event` behind those before it.
    func publish(_ event: OutgoingEvent) {
        pending.withLock { $0.count += 1 }
        if case .terminated = queue.yield(event) { done() }
    }

    /// The `ErrorRaised` for `process`, which failed `failures` times in a row and is no longer
    /// restarted; `log` is its output file.
    static func crashLooping(process: String, failures: Int, log: String) -> OutgoingEvent {
        errors.event(
            code: .crashLooping,
            message: "\(process) failed \(counted(failures, "time")) in a row and is no longer restarted; see \(log)")
    }

    /// The `ErrorRaised` for a control socket that could not be opened: `bureau ps`, `logs` and
    /// `down` cannot reach the deployment.
    static func controlUnavailable(_ error: any Error, pid: Int32) -> OutgoingEvent {
        errors.event(
            code: .controlUnavailable,
            message:
                "the control socket could not be opened (\(error)): bureau ps, logs and down cannot reach this "
                + "deployment; stop it with Ctrl-C or `kill \(pid)`")
    }

    /// The bus is ready: start publishing (once).
    func connect() {
        let start = state.withLock { state -> Bool in
            guard state.worker == nil else { return false }
            var options = ZeroMQBusClient.Options(process: "supervisor")
            options.publishTimeout = .seconds(5)
            do {
                state.client = try makeClient(options)
            } catch {
                self.logger.error(
                    "cannot publish the supervisor's events (ProcessStarted, ProcessExited): no client of the bus",
                    metadata: ["supervisor.error": "\(error)"])
            }
            return state.client != nil
        }
        guard start, let client = state.withLock({ $0.client }) else { return }
        let stream = self.stream
        let logger = self.logger
        let worker = Task {
            for await event in stream {
                // Until it lands, or the supervisor finishes; the same id every time.
                var failures = FailureStreak()
                while true {
                    do {
                        let outcome = try await client.publish(event)
                        if case .rejected(let reason) = outcome {
                            logger.error(
                                "the bus rejected \(event.type) from the supervisor: it is not in the log",
                                metadata: ["event.type": "\(event.type)", "error.description": "\(reason)"])
                        } else if failures.succeeded() > 0 {
                            logger.notice(
                                "published \(event.type) once the bus took it",
                                metadata: ["event.type": "\(event.type)"])
                        }
                        break
                    } catch {
                        if Task.isCancelled { break }
                        guard Self.retries(after: error) else {
                            logger.error(
                                "the bus refused \(event.type) from the supervisor: it is not in the log",
                                metadata: ["event.type": "\(event.type)", "error.description": "\(error)"])
                            break
                        }
                        if failures.failed() {
                            logger.warning(
                                "cannot publish \(event.type) yet: held, and tried again until the bus takes it",
                                metadata: ["event.type": "\(event.type)", "error.description": "\(error)"])
                        }
                        do {
                            try await Task.sleep(for: Self.retryBackoff.nominalDelay(attempt: failures.count))
                        } catch {
                            break
                        }
                    }
                }
                self.done()
            }
        }
        state.withLock { $0.worker = worker }
    }

    /// Between tries of an event the bus did not take: the bus is often down for a restart. At
    /// most a second, well within the drain before the bus stops (each try itself resends for
    /// the publish timeout), so that an event is never asleep when the bus is back for its end.
    static let retryBackoff = Backoff(initial: .milliseconds(100), maximum: .seconds(1), jitter: 0)

    /// Whether a publish that failed with `error` may land if tried again: not when the bus
    /// refused the request itself (malformed, too large, a protocol it does not speak), or
    /// answered what this client cannot use, or refused this client for good, or the client is
    /// closed: events go in order, and one that can never land would hold every later one.
    /// Anything else (no answer, a bus down or restarting, a full disk) may pass.
    static func retries(after error: any Error) -> Bool {
        switch error as? BusError {
        case .refused(let code, _):
            return ![BusErrorCode.malformedRequest, .tooLarge, .unknownVerb, .unsupportedProtocol].contains(code)
        case .requestTooLarge, .malformedEnvelope, .unexpectedAnswer, .connectionRefused, .closed:
            return false
        default:
            return !(error is CancellationError)
        }
    }

    private func done() {
        let waiters = pending.withLock { pending -> [CheckedContinuation<Void, Never>] in
            pending.count -= 1
            guard pending.count <= 0 else { return [] }
            defer { pending.waiters = [] }
            return pending.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once everything queued so far has been published (or given up on), or the
    /// supervisor finished; called before the bus is stopped, so that the last exits reach the
    /// log. How long to wait for it is the lifecycle's (a timer).
    func drain() async {
        guard state.withLock({ $0.worker != nil }) else { return }
        await withCheckedContinuation { continuation in
            let now = self.pending.withLock { pending in
                if pending.count <= 0 || pending.finished { return true }
                pending.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Stops publishing: what is still queued is dropped (the bus is gone), and the client closed.
    func finish() async {
        queue.finish()
        let waiters = pending.withLock { pending in
            pending.finished = true
            defer { pending.waiters = [] }
            return pending.waiters
        }
        for waiter in waiters { waiter.resume() }
        let (worker, client) = state.withLock { ($0.worker, $0.client) }
        worker?.cancel()
        client?.close()
    }
}
