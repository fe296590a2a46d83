#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where reducer hosts keep their snapshots. ``FileSnapshotStore`` writes files atomically;
/// `InMemorySnapshotStore` (in `InMemoryStores`) is its twin for tests; both pass one contract suite.
public protocol SnapshotStore: Sendable {
    /// The newest snapshot of `module` whose state version is `stateVersion`, or nil if
    /// there is none, it is of another version, or it cannot be read (the reason goes to
    /// `rejected`): the host then rebuilds the state from the log.
    func load<State: Codable & Sendable>(
        _ type: State.Type, module: String, stateVersion: Int, rejected: (String) -> Void
    ) -> Snapshot<State>?

    /// Replaces `module`'s snapshot, atomically: a crash leaves the old one or the new one.
    func save<State: Codable & Sendable>(_ snapshot: Snapshot<State>) throws
}
