import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

public struct SnapshotError: Error, CustomStringConvertible {
    public let description: String
}
