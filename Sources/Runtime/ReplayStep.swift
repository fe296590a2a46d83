import Bus
import EventLog

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One event and what it did: the snapshots before and after it, and their difference.
public struct ReplayStep: Sendable {
    public let event: StoredEvent
    public let before: ReplaySnapshot
    public let after: ReplaySnapshot
    public var changes: [StateChange] { before.changes(to: after) }
}
