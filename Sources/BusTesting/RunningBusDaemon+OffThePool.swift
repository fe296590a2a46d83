import Guards
import ZeroMQBus

extension RunningBusDaemon {
    /// ``stop()`` on a thread of its own: stopping joins the daemon's threads and syncs the log,
    /// which an async caller must not wait for on a thread of the cooperative pool (two on two
    /// cores: every other test would wait behind it).
    public func stopOffThePool() async {
        do {
            try await OwnThread.run(name: "bus-stop") { self.stop() }
        } catch {
            // No thread could be started: stop here rather than leave the daemon running.
            stop()
        }
    }

    /// Stops the daemon on a thread of its own and returns at once, keeping `keep` (its
    /// directory, say) until it has stopped: for a `deinit`, which cannot wait.
    public func stopInTheBackground(keeping keep: (any Sendable)? = nil) {
        do {
            try OwnThread.detached(name: "bus-stop") {
                self.stop()
                withExtendedLifetime(keep) {}
            }
        } catch {
            stop()
        }
    }
}
