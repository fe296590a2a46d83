import EventLog
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Snapshots kept in memory: the twin of ``FileSnapshotStore`` for tests.
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

    /// Replaces a stored snapshot with arbitrary bytes, to test unreadable snapshots.
    public func corrupt(_ module: String, with data: Data) {
        documents.withLock { $0[module] = data }
    }
}
