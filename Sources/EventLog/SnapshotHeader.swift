#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct SnapshotHeader: Decodable {
    var format: Int
    var module: String
    var stateVersion: Int
}
