#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

public struct SnapshotRejection: Error {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
}
