import BureauSchemas
import Bus
import EventLog
import Logging
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// The sockets of a daemon: made and bound on the thread that starts it, then handed to the
/// two loop threads (libzmq allows moving a socket to another thread across a memory barrier).
///
/// The ipc endpoints are always bound; TCP ones get sockets of their own, because CURVE is a
/// property of a socket, not of an endpoint.
final class DaemonSockets: @unchecked Sendable {
    let ingress: [ZMQSocket]
    let read: [ZMQSocket]
    let events: [ZMQSocket]
    /// The TCP endpoints as bound (a port of 0 resolved to the ports the system chose).
    let tcpEndpoints: BusEndpoints?
    /// The endpoint each socket of ``ingress``, ``read`` and ``events`` is bound to, in order.
    private let ingressEndpoints: [String]
    private let readEndpoints: [String]
    private let eventsEndpoints: [String]

    init(context: ZMQContext, configuration: BusDaemon.Configuration) throws {
        let ipc = configuration.location.ipcEndpoints
        var ingress = [try DaemonSockets.router(context, .ingress)]
        var read = [try DaemonSockets.router(context, .read)]
        var events = [try DaemonSockets.publisher(context, configuration)]
        try ingress[0].bind(ipc.ingress)
        try read[0].bind(ipc.read)
        try events[0].bind(ipc.events)
        // Owner-only, as the run directory is: the mode of the socket files says so too.
        for endpoint in [ipc.ingress, ipc.read, ipc.events] {
            try OwnerOnly.restrictSocket(of: endpoint)
        }
        if let tcp = configuration.tcp {
            let endpoints = tcp.endpoints
            let curve: Bool
            if case .curve = tcp.security { curve = true } else { curve = false }
            let sockets = [
                try DaemonSockets.router(context, .ingress), try DaemonSockets.router(context, .read),
                try DaemonSockets.publisher(context, configuration, curve: curve),
            ]
            if case .curve(let server, _) = tcp.security {
                for socket in sockets {
                    try socket.setZAPDomain("bureau")
                    try socket.setCurveServer(secretKey: server.secretKey)
                }
            }
            try sockets[0].bind(endpoints.ingress)
            try sockets[1].bind(endpoints.read)
            try sockets[2].bind(endpoints.events)
            ingress.append(sockets[0])
            read.append(sockets[1])
            events.append(sockets[2])
            tcpEndpoints = BusEndpoints(
                ingress: try sockets[0].lastEndpoint, read: try sockets[1].lastEndpoint,
                events: try sockets[2].lastEndpoint, serverKey: endpoints.serverKey)
        } else {
            tcpEndpoints = nil
        }
        let bound = [ipc] + (tcpEndpoints.map { [$0] } ?? [])
        ingressEndpoints = bound.map(\.ingress)
        readEndpoints = bound.map(\.read)
        eventsEndpoints = bound.map(\.events)
        self.ingress = ingress
        self.read = read
        self.events = events
    }

    private enum Role { case ingress, read }

    /// The most requests libzmq queues for one producer connection before it stops reading
    /// from it (the producer then waits; nothing is dropped): with frames of at most a legal
    /// batch, what one producer can make the daemon hold is bounded (README, "Limits").
    static let queuedRequestsPerProducer: Int32 = 4
    /// The same for a reader's read requests, each at most ``maxReadRequestBytes``.
    static let queuedReadsPerReader: Int32 = 100
    /// The largest read request frame: a `ReadRequest` with its prefixes is far smaller.
    static let maxReadRequestBytes = 64 << 10

    /// A ROUTER whose queues are bounded: in messages by libzmq's high-water marks and in bytes
    /// by the largest frame it accepts, which is the largest a legal request holds (a peer that
    /// sends a larger one is disconnected by libzmq, unanswered).
    ///
    /// libzmq holds a message until its last frame has come and sets no limit on the number of
    /// frames: a peer that sends frames without end is held whole. Only the owner of the run
    /// directory (ipc) and allowed keys (TCP) can connect.
    private static func router(_ context: ZMQContext, _ role: Role) throws -> ZMQSocket {
        let socket = try context.socket(.router)
        try socket.setLinger(milliseconds: 0)
        switch role {
        case .ingress:
            // A batch frame holds at most maxRequestBytes (envelopes and their lengths).
            try socket.setMaxMessageSize(Int64(BusLimits.maxRequestBytes))
            try socket.setReceiveHighWaterMark(queuedRequestsPerProducer)
            try socket.setSendHighWaterMark(10_000)
        case .read:
            try socket.setMaxMessageSize(Int64(maxReadRequestBytes))
            try socket.setReceiveHighWaterMark(queuedReadsPerReader)
            // Replies are up to a megabyte or so: a client that asks and never reads them has at
            // most this many queued, and later ones are dropped (it asks again when it reads).
            try socket.setSendHighWaterMark(Int32(WireProtocol.maxQueuedReplies))
        }
        return socket
    }

    /// The PUB socket. Subscriptions longer than any type name are refused (libzmq drops the
    /// peer), which bounds the memory one subscriber's subscriptions can take.
    ///
    /// Over CURVE the limit also applies to the handshake's commands (INITIATE is some 300
    /// bytes) and to each subscription's box: a limit of a type name's length would drop every
    /// subscriber before it could subscribe, so it has room for them.
    private static func publisher(
        _ context: ZMQContext, _ configuration: BusDaemon.Configuration, curve: Bool = false
    ) throws -> ZMQSocket {
        let socket = try context.socket(.pub)
        try socket.setMaxMessageSize(Int64(TypeName.maxLength + 1 + (curve ? curveAllowance : 0)))
        try socket.setLinger(milliseconds: 0)
        try socket.setSendHighWaterMark(configuration.publishHighWaterMark)
        return socket
    }

    /// What CURVE adds to the largest message a subscriber sends its PUB socket.
    static let curveAllowance = 1024

    /// What drops every connection of the ingress and events sockets (the ingress loop's), when
    /// `signal` rings.
    func ingressRenewal(_ signal: WakeSignal) -> SocketRenewal {
        SocketRenewal(
            signal: signal,
            bound: Array(zip(ingress, ingressEndpoints)) + Array(zip(events, eventsEndpoints)))
    }

    /// What drops every connection of the read sockets (the catch-up server's), when `signal` rings.
    func readRenewal(_ signal: WakeSignal) -> SocketRenewal {
        SocketRenewal(signal: signal, bound: Array(zip(read, readEndpoints)))
    }

    func closeAll() {
        for socket in ingress + read + events { socket.close() }
    }
}
