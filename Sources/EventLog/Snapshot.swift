#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A checkpoint of a reducer: its state once every event up to `position` is accounted for
/// (each input applied, each of its outputs acknowledged).
public struct Snapshot<State: Codable & Sendable>: Sendable {
    public var module: String
    public var stateVersion: Int
    /// Every event at or before it is accounted for; a host resumes after it.
    public var position: UInt64
    public var state: State

    public init(module: String, stateVersion: Int, position: UInt64, state: State) {
        self.module = module
        self.stateVersion = stateVersion
        self.position = position
        self.state = state
    }
}
