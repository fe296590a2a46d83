#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The file format of a snapshot: a header and the state, as JSON.
struct SnapshotDocument<State: Codable>: Codable {
    /// The format of this file, not of the state.
    var format: Int
    var module: String
    var stateVersion: Int
    var position: UInt64
    var state: State

    static var currentFormat: Int { 1 }
}
