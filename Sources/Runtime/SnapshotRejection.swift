import EventLog

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct SnapshotRejection: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
