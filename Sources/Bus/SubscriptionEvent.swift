import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a subscription yields: committed events in order, and news about the stream itself.
public enum SubscriptionEvent: Sendable, Equatable {
    /// The next matching event; never one already delivered, never out of order.
    case event(StoredEvent)
    /// The subscription has read the log up to the head at that moment and now follows live.
    /// Sent each time it catches up, after starting and after filling a gap.
    case caughtUp(head: UInt64)
    /// The bus's heartbeat was heard again (true), or not for three intervals (false).
    case connection(isConnected: Bool)
}
