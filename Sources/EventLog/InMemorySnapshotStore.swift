import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Snapshots kept in memory: the twin of ``FileSnapshotStore`` for tests, with failing saves
/// on demand (a store that is away).
public final class InMemorySnapshotStore: SnapshotStore {
    private let documents = Mutex<[String: Data]>([:])
    private let failingSaves = Mutex(0)

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
        let failing = failingSaves.withLock { count in
            defer { count = max(count - 1, 0) }
            return count > 0
        }
        if failing {
            throw SnapshotError(description: "could not save the snapshot of \(snapshot.module): the store is away")
        }
        let data = try SnapshotCoding.encode(snapshot)
        documents.withLock { $0[snapshot.module] = data }
    }

    /// Makes the next `count` saves fail, each leaving the stored snapshot as it was.
    public func failSaves(_ count: Int) {
        failingSaves.withLock { $0 = max(count, 0) }
    }

    /// Replaces a stored snapshot with arbitrary bytes, to test unreadable snapshots.
    public func corrupt(_ module: String, with data: Data) {
        documents.withLock { $0[module] = data }
    }
}
