#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// The three endpoints of a bus.
public struct BusEndpoints: Codable, Sendable, Equatable {
    /// ROUTER: publish and ping requests.
    public var ingress: String
    /// ROUTER: read (catch-up) and ping requests.
    public var read: String
    /// PUB: every committed event and the heartbeat.
    public var events: String
    /// The daemon's CURVE public key (Z85) when the endpoints are encrypted TCP.
    public var serverKey: String?
    /// Other daemons of the same bus (standbys on a shared store) that a client connects to as
    /// well: only the one that holds the store's writer lock binds its sockets, so requests go
    /// to whichever is active, and to its successor by themselves (the ZeroMQ Guide's Binary
    /// Star, seen from the client). They share ``serverKey``.
    public var alternates: [BusEndpoints]?

    public init(
        ingress: String, read: String, events: String, serverKey: String? = nil, alternates: [BusEndpoints]? = nil
    ) {
        self.ingress = ingress
        self.read = read
        self.events = events
        self.serverKey = serverKey
        self.alternates = alternates
    }

    /// These endpoints and every alternate's, in order.
    public var all: [BusEndpoints] { [self] + (alternates ?? []) }
}
