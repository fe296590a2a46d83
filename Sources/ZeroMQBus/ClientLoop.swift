import BureauSchemas
import Bus
import Guards
import Logging
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
        /// A progress report for the daemon: sent, not answered.
        case report(Data)
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

    /// A request on the read socket that one reply answers: a ping (answered `pong`) or
    /// `stats` (answered `stats`); the reply's body is handed back.
    struct PendingPing: Sendable {
        let requestID: UInt64
        let deadline: ContinuousClock.Instant
        var verb = WireProtocol.ping
        var replyVerb = WireProtocol.pong
        let continuation: CheckedContinuation<Data, any Error>
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
    private let thread = Mutex<OwnThread?>(nil)

    init(endpoints: BusEndpoints, options: ZeroMQBusClient.Options, logger: Logger) throws {
        wake = try WakeSignal()
        var generator = SystemRandomNumberGenerator()
        requestIDs = Atomic(generator.next() >> 1)
        let context = try ZMQContext(ioThreads: 1)
        let worker = UncheckedBox(
            try ClientWorker(context: context, endpoints: endpoints, options: options, logger: logger))
        let started = try OwnThread(name: "bureau-client") { [self] in
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
        let started = thread.withLock { thread -> OwnThread? in
            defer { thread = nil }
            return thread
        }
        started?.join()
    }
}
