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

    public init(ingress: String, read: String, events: String, serverKey: String? = nil) {
        self.ingress = ingress
        self.read = read
        self.events = events
        self.serverKey = serverKey
    }
}
