import EventLog
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Snapshots kept in memory: the twin of ``FileSnapshotStore``, which the test kit's in-memory
/// and in-process deployments (`BusTesting`) and the tests use. A store that fails on demand is
/// `FailingSnapshotStore`, in the test-only `FaultInjection`.
public final class InMemorySnapshotStore: SnapshotStore {
    private let documents = Mutex<[String: Data]>([:])

    public init() {}

    public func load<State: Codable & Sendable>(
        _ type: State.Type, module: String, stateVersion: Int, rejected: (String) -> Void
    ) -> Snapshot<State>? {
        guard let data = documents.withLock({ $0[module] }) else { return nil }
        switch SnapshotCoding.decode(data, as: type, module: module, stateVersion: stateVersion) {
        case .success(let snapshot): return snapshot
        case .failure(let rejection):
            rejected(rejection.reason)
            return nil
        }
    }

    public func save<State: Codable & Sendable>(_ snapshot: Snapshot<State>) throws {
        let data = try SnapshotCoding.encode(snapshot)
        documents.withLock { $0[snapshot.module] = data }
    }

    /// Keeps `data` as `module`'s snapshot as it is, unchecked, as a file written by hand into a
    /// ``FileSnapshotStore``'s directory is kept: loading it says what is wrong with it.
    public func keep(_ data: Data, as module: String) {
        documents.withLock { $0[module] = data }
    }
}
