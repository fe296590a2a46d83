import EventLog
import InMemoryStores
import Synchronization

/// A snapshot store whose next saves fail on demand, in front of another: a store that is
/// away (a server failing over), for the tests of what saves snapshots. A failed save leaves
/// the stored snapshot as it was. Every save it is asked for is told on ``attempts``, so that
/// a test awaits a save rather than assuming one was made.
public final class FailingSnapshotStore: SnapshotStore {
    /// A save this store was asked for: the snapshot's position, and whether it was stored.
    public struct Attempt: Sendable, Equatable {
        public let position: UInt64
        public let saved: Bool
    }

    public let inner: any SnapshotStore
    /// Every save asked for, in order (the newest 1,000 kept until read).
    public let attempts: AsyncStream<Attempt>
    private let attempted: AsyncStream<Attempt>.Continuation
    private let failing = Mutex(0)

    public init(_ inner: any SnapshotStore = InMemorySnapshotStore()) {
        self.inner = inner
        (attempts, attempted) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1_000))
    }

    /// Makes the next `count` saves fail.
    public func failSaves(_ count: Int) {
        failing.withLock { $0 = max(count, 0) }
    }

    /// The position of the first save stored at or after `position` (one stored before this
    /// call counts, unless more than 1,000 saves came between), once made; nil if the caller
    /// is cancelled first.
    public func saved(atLeast position: UInt64) async -> UInt64? {
        for await attempt in attempts where attempt.saved && attempt.position >= position {
            return attempt.position
        }
        return nil
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
        do {
            if fails {
                throw SnapshotError(description: "could not save the snapshot of \(snapshot.module): the store is away")
            }
            try inner.save(snapshot)
        } catch {
            attempted.yield(Attempt(position: snapshot.position, saved: false))
            throw error
        }
        attempted.yield(Attempt(position: snapshot.position, saved: true))
    }
}
