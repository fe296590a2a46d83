#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// What a running daemon writes to `run/bus.json`.
public struct BusInfo: Codable, Sendable, Equatable {
    public var pid: Int32
    public var epoch: UInt64
    public var startedAt: String
    public var version: String
    /// The ipc endpoints, for processes on this machine.
    public var endpoints: BusEndpoints
    /// The TCP endpoints, if the daemon also listens on TCP.
    public var tcpEndpoints: BusEndpoints?

    public init(
        pid: Int32, epoch: UInt64, startedAt: String, version: String, endpoints: BusEndpoints,
        tcpEndpoints: BusEndpoints?
    ) {
        self.pid = pid
        self.epoch = epoch
        self.startedAt = startedAt
        self.version = version
        self.endpoints = endpoints
        self.tcpEndpoints = tcpEndpoints
    }
}
