import Testing

@testable import Bus

struct SubscriptionTrackerTests {
    static func live(_ filter: EventFilter = .all, at cursor: UInt64) -> SubscriptionTracker {
        var tracker = SubscriptionTracker(filter: filter, after: cursor)
        _ = tracker.readReply(positions: [], scannedTo: cursor, head: cursor)
        return tracker
    }

    @Test func itReadsTheLogUntilItReachesTheHeadThenGoesLive() {
        var tracker = SubscriptionTracker(filter: .all, after: 0)
        #expect(!tracker.isLive)
        #expect(tracker.readReply(positions: [1, 2, 3], scannedTo: 3, head: 5) == ([0, 1, 2], false))
        #expect(tracker.readReply(positions: [4, 5], scannedTo: 5, head: 5) == ([0, 1], true))
        #expect(tracker.isLive && tracker.cursor == 5)
    }

    @Test func eventsAlreadyDeliveredAreDroppedWhereverTheyComeFrom() {
        var tracker = Self.live(at: 5)
        #expect(tracker.publication(position: 4, previousInPackage: 0, type: "bureau.a.X") == .skip)
        #expect(tracker.publication(position: 6, previousInPackage: 0, type: "bureau.a.X") == .deliver)
        #expect(tracker.publication(position: 6, previousInPackage: 0, type: "bureau.a.X") == .skip)
    }

    @Test func aHoleInGlobalPositionsIsAGap() {
        var tracker = Self.live(at: 5)
        #expect(tracker.publication(position: 7, previousInPackage: 0, type: "bureau.a.X") == .fetch)
        #expect(!tracker.isLive)
        // The read fills the hole; the publication that revealed it comes again from the log.
        #expect(tracker.readReply(positions: [6, 7], scannedTo: 7, head: 7) == ([0, 1], true))
    }

    @Test func aPackageChainIgnoresOtherPackagesButCatchesItsOwnHoles() {
        var tracker = Self.live(EventFilter(prefixes: ["bureau.a."]), at: 10)
        #expect(tracker.chain == .package("bureau.a"))
        #expect(tracker.publication(position: 15, previousInPackage: 10, type: "bureau.a.X") == .deliver)
        #expect(tracker.publication(position: 20, previousInPackage: 15, type: "bureau.a.Y") == .deliver)
        #expect(tracker.publication(position: 30, previousInPackage: 25, type: "bureau.a.X") == .fetch)
    }

    @Test func aLostLastMessageIsNoticedAtTheNextHeartbeat() {
        var global = Self.live(at: 5)
        #expect(global.heartbeat(head: 5, epochStart: 0, packageHeads: [:]) == .skip)
        #expect(global.heartbeat(head: 6, epochStart: 0, packageHeads: [:]) == .fetch)

        var package = Self.live(EventFilter(prefixes: ["bureau.a.X"]), at: 5)
        // Other packages moved on: nothing missed, and the cursor moves to the head.
        #expect(package.heartbeat(head: 9, epochStart: 0, packageHeads: ["bureau.a": 5, "bureau.b": 9]) == .skip)
        #expect(package.cursor == 9)
        #expect(package.heartbeat(head: 12, epochStart: 0, packageHeads: ["bureau.a": 11]) == .fetch)
    }

    @Test func afterADaemonRestartAnUnknownPackageHeadIsCheckedAgainstTheLog() {
        var tracker = Self.live(EventFilter(prefixes: ["bureau.a."]), at: 5)
        // The new daemon started at head 8 and has not seen bureau.a since: events 6…8 may hold some.
        #expect(tracker.heartbeat(head: 8, epochStart: 8, packageHeads: [:]) == .fetch)
    }

    @Test func filtersThatSpanPackagesFollowTheGlobalChain() {
        #expect(EventFilter(prefixes: ["bureau.a.X", "bureau.b.Y"]).chain == .global)
        #expect(EventFilter(prefixes: ["bureau.a.X", "bureau.a.Y"]).chain == .package("bureau.a"))
        #expect(EventFilter(prefixes: ["bureau.wat"]).chain == .global)
        #expect(EventFilter.all.chain == .global)
    }

    @Test func aNoticeOfAWantedEventIsReadFromTheLogAndOneNotWantedMovesTheCursorOn() {
        var tracker = Self.live(EventFilter(prefixes: ["bureau.a.", "bureau.b."]), at: 5)
        // Global chain (two packages): a notice of a wanted event stops live reading, cursor kept.
        #expect(tracker.publication(position: 6, previousInPackage: 0, type: "bureau.a.X", bodyOmitted: true) == .fetch)
        #expect(tracker.cursor == 5 && !tracker.isLive)
        #expect(tracker.readReply(positions: [6], scannedTo: 6, head: 6) == ([0], true))
        // A notice of an event nobody here wants only moves the cursor on.
        #expect(tracker.publication(position: 7, previousInPackage: 0, type: "bureau.c.Y", bodyOmitted: true) == .skip)
        #expect(tracker.cursor == 7 && tracker.isLive)
    }

    @Test func aHeartbeatOlderThanWhatWasDeliveredNeverMovesTheCursorBackAndAsksTheLog() {
        var tracker = Self.live(at: 5)
        #expect(tracker.publication(position: 6, previousInPackage: 0, type: "bureau.a.X") == .deliver)
        // Sent before 6 (a read delivered it first), or by a daemon whose log ends at 5: a read
        // after 6 tells which (the daemon answers it `ahead-of-log` if its log ends before 6).
        #expect(tracker.heartbeat(head: 5, epochStart: 0, packageHeads: [:]) == .fetch)
        #expect(tracker.cursor == 6)
        #expect(tracker.isAhead(ofHead: 5))
        #expect(!tracker.isAhead(ofHead: 6))
        #expect(tracker.readReply(positions: [], scannedTo: 6, head: 6) == ([], true))
        #expect(tracker.publication(position: 6, previousInPackage: 0, type: "bureau.a.X") == .skip)
    }
}
