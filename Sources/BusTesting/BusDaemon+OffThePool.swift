import Guards
import ZeroMQBus

extension BusDaemon {
    /// ``start()`` on a thread of its own: starting opens and recovers the log and syncs files,
    /// which an async caller must not wait for on a thread of the cooperative pool.
    public func startOffThePool() async throws -> RunningBusDaemon {
        try await OwnThread.run(name: "bus-start") { try self.start() }
    }
}
