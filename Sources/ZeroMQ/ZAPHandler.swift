import Guards

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Authenticates CURVE clients against an allow-list of public keys (ZeroMQ's ZAP, RFC 27).
///
/// libzmq asks the handler at `inproc://zeromq.zap.01` of the same context about every
/// connection to a socket that has a ZAP domain. Start the handler before binding such a
/// socket, and stop it before closing the context.
public final class ZAPHandler: @unchecked Sendable {
    /// One answer the handler gave, for logging.
    public struct Decision: Sendable {
        public let allowed: Bool
        public let address: String
        public let mechanism: String
        /// The client's public key in Z85, for CURVE.
        public let clientKey: String?
    }

    private let context: ZMQContext
    private let allowedKeys: Set<String>
    private let onDecision: @Sendable (Decision) -> Void
    private let onFailure: @Sendable (Failure) -> Void
    private let stopSignal: WakeSignal
    private var thread: OwnThread?

    /// - Parameters:
    ///   - allowedKeys: Z85 public keys of the clients to let in.
    ///   - onDecision: called on the handler's thread for every connection attempt.
    ///   - onFailure: called on the handler's thread when a request could not be answered
    ///     (once, when a streak of failures starts): the caller reports it where the operator looks.
    public init(
        context: ZMQContext, allowedKeys: Set<String>,
        onDecision: @escaping @Sendable (Decision) -> Void = { _ in },
        onFailure: @escaping @Sendable (Failure) -> Void
    ) throws {
        self.context = context
        self.allowedKeys = allowedKeys
        self.onDecision = onDecision
        self.onFailure = onFailure
        stopSignal = try WakeSignal()
    }

    /// Binds the handler's socket and serves requests on a thread of its own until ``stop()``.
    public func start() throws {
        // Bind on this thread so that the endpoint exists before the caller binds a CURVE
        // socket; the socket then moves to the handler thread, which libzmq allows after a
        // full memory barrier (the thread start is one).
        // A ROUTER socket, not the REP of RFC 27's examples: a REP socket whose send failed
        // waits for that send for ever, and libzmq would hold every later handshake behind it.
        // A ROUTER has no such state: libzmq's request comes as [peer, empty delimiter, ZAP
        // frames…], and the answer goes back as [peer, empty delimiter, answer frames…]. It is
        // never unbound while the daemon runs: without a handler at the endpoint libzmq lets
        // CURVE clients in unchecked.
        let socket = try context.socket(.router)
        do {
            try socket.setLinger(milliseconds: 0)
            try socket.bind("inproc://zeromq.zap.01")
        } catch {
            socket.close()
            throw error
        }
        // Used by the handler thread alone from here on.
        let box = UncheckedBox(socket)
        thread = try OwnThread(name: "bureau-zap") { [self] in
            self.serve(box.value)
        }
    }

    /// Stops serving and closes the handler's socket.
    public func stop() {
        stopSignal.ring()
        thread?.join()
        thread = nil
    }

    /// A failure of the handler's socket. The socket stays bound: the request that failed goes
    /// unanswered (its client's handshake waits, then fails; nobody is let in unasked), and
    /// the next is served.
    public struct Failure: Sendable, CustomStringConvertible {
        public let error: any Error

        public var description: String {
            "the CURVE authentication (ZAP) handler could not answer a connection, which is not let in: \(error)"
        }
    }

    private func serve(_ socket: ZMQSocket) {
        var poller = ZMQPoller()
        let requests = poller.add(socket)
        let stop = poller.add(fileDescriptor: stopSignal.fileDescriptor)
        // A failure that comes back turn after turn is told once, not every turn.
        var failures = FailureStreak()
        while true {
            do {
                try poller.poll(timeout: -1)
                if poller.isReadable(stop) { break }
                guard poller.isReadable(requests), let frames = try socket.receiveMessage(wait: false) else {
                    continue
                }
                guard frames.count >= 2, frames[1].isEmpty else { continue }
                try socket.send(multipart: [frames[0], Data()] + reply(to: Array(frames[2...])))
                _ = failures.succeeded()
            } catch let error as ZMQError where error.contextTerminated {
                break
            } catch {
                if failures.failed() { onFailure(Failure(error: error)) }
            }
        }
        socket.close()
    }

    /// Frames: version, request id, domain, address, identity, mechanism, credentials…
    func reply(to frames: [Data]) -> [Data] {
        guard frames.count >= 6 else {
            return Self.answer(
                requestID: frames.count > 1 ? frames[1] : Data(), status: "500", text: "malformed ZAP request")
        }
        let requestID = frames[1]
        let address = String(decoding: frames[3], as: UTF8.self)
        let mechanism = String(decoding: frames[5], as: UTF8.self)
        guard String(decoding: frames[0], as: UTF8.self) == "1.0" else {
            return Self.answer(requestID: requestID, status: "500", text: "unsupported ZAP version")
        }
        var clientKey: String?
        var allowed = false
        if mechanism == "CURVE", frames.count >= 7 {
            clientKey = CurveKeyPair.text(ofRawKey: Array(frames[6]))
            allowed = clientKey.map(allowedKeys.contains) ?? false
        }
        onDecision(Decision(allowed: allowed, address: address, mechanism: mechanism, clientKey: clientKey))
        return allowed
            ? Self.answer(requestID: requestID, status: "200", text: "OK", user: clientKey ?? "")
            : Self.answer(requestID: requestID, status: "400", text: "client key not allowed")
    }

    private static func answer(requestID: Data, status: String, text: String, user: String = "") -> [Data] {
        [Data("1.0".utf8), requestID, Data(status.utf8), Data(text.utf8), Data(user.utf8), Data()]
    }
}
