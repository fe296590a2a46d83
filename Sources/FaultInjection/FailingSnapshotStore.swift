import EventLog
import Synchronization

/// A snapshot store whose next saves fail on demand, in front of another: a store that is
/// away (a server failing over), for the tests of what saves snapshots. A failed save leaves
/// the stored snapshot as it was.
public final class FailingSnapshotStore: SnapshotStore {
    public let inner: any SnapshotStore
    private let failing = Mutex(0)

    public init(_ inner: any SnapshotStore = InMemorySnapshotStore()) {
        self.inner = inner
    }

    /// Makes the next `count` saves fail.
    public func failSaves(_ count: Int) {
        failing.withLock { $0 = max(count, 0) }
    }

    public func load<State: Codable & Sendable>(
        _ type: State.Type, module: String, stateVersion: Int, rejected: (String) -> Void
    ) -> Snapshot<State>? {
        inner.load(type, module: module, stateVersion: stateVersion, rejected: rejected)
    }

    public func save<State: Codable & Sendable>(_ snapshot: Snapshot<State>) throws {
        let fails = failing.withLock { count in
            defer { count = max(count - 1, 0) }
            return count > 0
        }
        if fails {
            throw SnapshotError(description: "could not save the snapshot of \(snapshot.module): the store is away")
        }
        try inner.save(snapshot)
    }
}
