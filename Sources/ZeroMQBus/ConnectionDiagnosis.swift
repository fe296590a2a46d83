import ZeroMQ

/// What a client has learned about its connections to a TCP bus from libzmq's socket monitor,
/// told as a reason a person can act on.
///
/// libzmq reconnects by itself and never fails a send for a refused handshake, so without this
/// a client with a wrong key would only ever say "no answer". ``record(_:)`` returns a reason
/// when an event settles the matter (the daemon refused the key, or one side does not speak
/// CURVE): the worker then fails what is waiting at once. ``explanation`` is the best guess at
/// why nothing answered, for when a request times out.
struct ConnectionDiagnosis: Sendable, Equatable {
    /// Whether the client speaks CURVE (it was given a server key and a client key).
    let usesCurve: Bool

    private(set) var connections = 0
    private(set) var handshakes = 0
    /// Connections that ended before their handshake finished.
    private(set) var cutInHandshake = 0
    /// The reason an event settled the matter with, once one has: it stays the reason.
    private(set) var verdict: String?

    init(usesCurve: Bool) {
        self.usesCurve = usesCurve
    }

    /// Takes in one monitor event of a connection to the bus; returns a reason when it shows the client can never get in.
    mutating func record(_ event: ZMQMonitorEvent) -> String? {
        let reason = settle(event)
        if let reason { verdict = reason }
        return reason
    }

    private mutating func settle(_ event: ZMQMonitorEvent) -> String? {
        switch event.kind {
        case .connected:
            connections += 1
        case .handshakeSucceeded:
            handshakes += 1
        case .handshakeFailedAuth:
            return event.value == 400
                ? "the bus refused this client's key: its public key is not in the daemon's --allow-keys "
                    + "(the daemon logs the key it refused)"
                : "the bus could not authenticate this client (ZAP status \(event.value))"
        case .handshakeFailedProtocol where event.value == ZMQMonitorEvent.mechanismMismatch:
            return usesCurve
                ? "the bus does not use CURVE (it was started with --insecure); "
                    + "connect without --server-key and --client-key"
                : "the bus requires CURVE: " + Self.giveKeys
        case .handshakeFailedProtocol, .handshakeFailedNoDetail:
            cutInHandshake += 1
        case .disconnected where connections > 0 && handshakes == 0:
            cutInHandshake += 1
        case .connectDelayed, .connectRetried, .closed, .disconnected, .other:
            break
        }
        return nil
    }

    private static let giveKeys =
        "give --server-key (the daemon's .pub) and --client-key (this client's .key from `bureau keygen`)"

    /// Why nothing answered, as far as the monitor can tell; nil when the connection was made
    /// (the daemon is there but did not answer in time) or nothing is known yet.
    var explanation: String? {
        // A refusal seen before the request was even made is still why nothing answers it.
        if let verdict { return verdict }
        if handshakes > 0 { return nil }
        if cutInHandshake > 0 {
            return usesCurve
                ? "the daemon ended every connection during the CURVE handshake: "
                    + "--server-key is probably not this daemon's public key"
                    // The daemon closes a plain connection as soon as it reads the greeting, which
                    // can be before this side reads the daemon's and reports the mismatch itself.
                : "the daemon ended every connection during the handshake, so it probably requires CURVE: "
                    + Self.giveKeys
        }
        if connections == 0 {
            return "could not connect: nothing listens there, or the host cannot be reached"
        }
        return nil
    }
}
