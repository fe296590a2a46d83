import BureauSchemas

/// Decides, for one subscription, whether a message can be delivered or a gap must be filled
/// from the log first. Pure: the client loop feeds it and does what it says.
///
/// Its invariant: every matching event at or before ``cursor`` has been delivered, in order,
/// once. A live publication names the previous event of its chain (the position before it
/// for the global chain, the previous event of its package for a package chain); if that is
/// after the cursor, something was lost and the tracker asks for a read of the log instead.
/// A heartbeat names the head of every chain, so a lost last message is noticed within one
/// heartbeat interval.
package struct SubscriptionTracker {
    package enum Action: Equatable {
        /// Deliver this event.
        case deliver
        /// Nothing to deliver (a duplicate, an event the filter does not want, a heartbeat).
        case skip
        /// Something may be missing: stop reading live and read the log after ``cursor``.
        case fetch
    }

    package let filter: EventFilter
    package let chain: EventFilter.Chain
    /// "package." as bytes, for the package chain.
    private let packagePrefix: [UInt8]
    package private(set) var cursor: UInt64
    /// Live once a read of the log has reached the head; until then publications are not read.
    package private(set) var isLive = false

    package init(filter: EventFilter, after position: UInt64) {
        self.filter = filter
        chain = filter.chain
        if case .package(let package) = chain {
            packagePrefix = Array((package + ".").utf8)
        } else {
            packagePrefix = []
        }
        cursor = position
    }

    /// A publication `[type][position, previous in package][envelope]` arrived; `bodyOmitted`
    /// if the envelope frame was empty (an event too large for the live stream: a notice).
    package mutating func publication(
        position: UInt64, previousInPackage: UInt64, type: String, bodyOmitted: Bool = false
    )
        -> Action
    {
        var type = type
        return type.withUTF8 {
            publication(
                position: position, previousInPackage: previousInPackage, type: UnsafeRawBufferPointer($0),
                bodyOmitted: bodyOmitted)
        }
    }

    /// A publication arrived, its type name as the topic frame's bytes.
    package mutating func publication(
        position: UInt64, previousInPackage: UInt64, type: UnsafeRawBufferPointer, bodyOmitted: Bool = false
    ) -> Action {
        guard isLive, position > cursor else { return .skip }
        let previous: UInt64
        switch chain {
        case .global:
            previous = position - 1
        case .package:
            // A longer package that shares the prefix ("bureau.watchlist.more") has a chain of its own.
            guard EventFilter.hasPrefix(type, packagePrefix),
                !type[packagePrefix.count...].contains(UInt8(ascii: "."))
            else { return .skip }
            previous = previousInPackage
        }
        guard previous <= cursor else {
            isLive = false
            return .fetch
        }
        guard filter.matches(bytes: type) else {
            cursor = position
            return .skip
        }
        // A notice of a large event: read it from the log, from just before it.
        if bodyOmitted {
            isLive = false
            return .fetch
        }
        cursor = position
        return .deliver
    }

    /// A heartbeat arrived.
    package mutating func heartbeat(head: UInt64, epochStart: UInt64, packageHeads: [String: UInt64]) -> Action {
        guard isLive else { return .skip }
        // A head below the cursor is a heartbeat sent before what a read delivered, or a daemon
        // whose log ends before it (restored from an older copy, another log): a read tells
        // which, as the daemon answers a read after its head `ahead-of-log`.
        guard head >= cursor else {
            isLive = false
            return .fetch
        }
        let last: UInt64
        switch chain {
        case .global: last = head
        // A package absent from the heartbeat last published at or before the daemon started.
        case .package(let package): last = packageHeads[package] ?? min(epochStart, head)
        }
        guard last <= cursor else {
            isLive = false
            return .fetch
        }
        cursor = max(cursor, head)
        return .skip
    }

    /// Whether a log whose head is `head` ends before what this subscriber has: it is not the log
    /// the subscriber read (restored from an older copy, replaced, another bus's), and going on
    /// would drop what it publishes up to the cursor as already delivered. A catch-up read
    /// answered so ends the subscription with ``BusError/aheadOfLog(position:head:epoch:)``.
    package func isAhead(ofHead head: UInt64) -> Bool { cursor > head }

    /// A read of the log answered: `positions` are the events it returned (already filtered
    /// by the daemon), every event up to `scannedTo` was considered, and `head` was the head.
    /// Returns which of the events to deliver (by index), and whether the read reached the head.
    package mutating func readReply(
        positions: [UInt64], scannedTo: UInt64, head: UInt64
    ) -> (deliver: [Int], caughtUp: Bool) {
        guard !isLive else { return ([], true) }
        var deliver: [Int] = []
        for (index, position) in positions.enumerated() where position > cursor {
            deliver.append(index)
            cursor = position
        }
        cursor = max(cursor, scannedTo)
        if cursor >= head {
            isLive = true
        }
        return (deliver, isLive)
    }
}
