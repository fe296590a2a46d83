import BureauSchemas

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a bus said about itself in answer to a ping.
public struct BusStatus: Sendable, Equatable {
    /// The last published position.
    public var head: UInt64
    /// Random per daemon start (per in-memory bus).
    public var epoch: UInt64
    public var pid: Int32
    public var version: String

    public init(head: UInt64, epoch: UInt64, pid: Int32, version: String) {
        self.head = head
        self.epoch = epoch
        self.pid = pid
        self.version = version
    }
}
