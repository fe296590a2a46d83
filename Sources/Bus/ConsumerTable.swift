import BureauSchemas
import Guards

/// What a bus knows of its consumers: the last progress each reported, when, and what their
/// lag is now. Pure: the daemon (and the in-memory twin) feeds it reports and the time.
///
/// Lag is computed here, by the bus, from the position a consumer last reported and the head
/// now, rather than by the consumer: a consumer that stopped reading (SIGSTOP, a deadlock, a
/// partition) reports nothing, so only the bus can see its lag keep growing (INTERNALS.md,
/// "Lag is the bus's to tell"). A consumer that never reported is not in the table: its lag
/// is unknown, not 0.
package struct ConsumerTable: Sendable {
    package struct Key: Hashable, Sendable, Comparable {
        package let consumer: String
        package let process: String

        package init(consumer: String, process: String) {
            self.consumer = consumer
            self.process = process
        }

        package static func < (left: Key, right: Key) -> Bool {
            (left.consumer, left.process) < (right.consumer, right.process)
        }
    }

    struct Entry: Sendable {
        var last: Bureau_Bus_ConsumerProgress
        var heardAt: ContinuousClock.Instant
        /// Recent reports' counts, oldest first, for the rates; at most ``rateWindow`` old.
        var history: [(at: ContinuousClock.Instant, applied: UInt64, outputs: UInt64)]
        /// The commit time of the first event after ``last``'s position, once read.
        var nextCommitTime: CommitTime?
    }

    /// How far back the rates look.
    package static let rateWindow: Duration = .seconds(5)
    /// How long after its last report a consumer's rates are still told. A consumer reports about
    /// once a second; one silent for longer (stopped, cut off) has rates nobody knows, and its
    /// last ones, shown on, would make a stopped consumer look busy.
    package static let ratesStaleAfter: Duration = .seconds(3)
    /// The most consumers remembered, so that a peer inventing names cannot grow it without end.
    package static let capacity = 1024

    private var entries: [Key: Entry] = [:]

    package init() {}

    package var count: Int { entries.count }
    package var keys: [Key] { entries.keys.sorted() }

    /// Takes in a report: a consumer's progress now. One that is leaving is forgotten.
    package mutating func record(_ report: Bureau_Bus_ConsumerProgress, at now: ContinuousClock.Instant) {
        let key = Key(consumer: report.consumer, process: report.process)
        if report.leaving {
            entries.removeValue(forKey: key)
            return
        }
        guard var entry = entries[key] else {
            guard entries.count < Self.capacity else { return }
            entries[key] = Entry(
                last: report, heardAt: now, history: [(now, report.inputsApplied, report.outputs)],
                nextCommitTime: nil)
            return
        }
        // A restarted consumer counts from 0 again: its history starts afresh.
        if report.inputsApplied < entry.last.inputsApplied || report.outputs < entry.last.outputs {
            entry.history = []
        }
        if report.position != entry.last.position { entry.nextCommitTime = nil }
        entry.last = report
        entry.heardAt = now
        entry.history.append((now, report.inputsApplied, report.outputs))
        if let cut = entry.history.firstIndex(where: { now - $0.at <= Self.rateWindow }), cut > 0 {
            entry.history.removeFirst(cut)
        }
        entries[key] = entry
    }

    /// The positions after which the bus should read an event's commit time: consumers behind
    /// the head whose oldest unhandled event's time is not known yet.
    package func positionsWantingCommitTime(head: UInt64) -> [UInt64] {
        Array(Set(entries.values.filter { $0.last.position < head && $0.nextCommitTime == nil }.map(\.last.position)))
            .sorted()
    }

    /// Records the commit time of the first event after `position`.
    package mutating func learnCommitTime(after position: UInt64, _ time: CommitTime) {
        for (key, entry) in entries where entry.last.position == position && entry.nextCommitTime == nil {
            entries[key]?.nextCommitTime = time
        }
    }

    /// Every consumer as the bus sees it now, sorted by name.
    package func statuses(
        head: UInt64, now: ContinuousClock.Instant, wallNow: CommitTime
    )
        -> [Bureau_Bus_ConsumerStatus]
    {
        keys.compactMap { key in
            guard let entry = entries[key] else { return nil }
            return Self.status(of: entry, head: head, now: now, wallNow: wallNow)
        }
    }

    static func status(
        of entry: Entry, head: UInt64, now: ContinuousClock.Instant, wallNow: CommitTime
    ) -> Bureau_Bus_ConsumerStatus {
        let report = entry.last
        var status = Bureau_Bus_ConsumerStatus()
        status.consumer = report.consumer
        status.process = report.process
        status.pid = report.pid
        status.position = report.position
        status.live = report.live
        status.lagEvents = head > report.position ? head - report.position : 0
        if status.lagEvents == 0 {
            status.lagTimeKnown = true
        } else if let time = entry.nextCommitTime {
            status.lagTimeKnown = true
            status.lagMs = UInt64(max(0, (wallNow - time).inMilliseconds))
        }
        status.progressAgeMs = UInt64(max(0, (now - entry.heardAt).inMilliseconds))
        status.inputsApplied = report.inputsApplied
        status.inputsMalformed = report.inputsMalformed
        status.outputs = report.outputs
        // Unknown (a window of 0) once the last report is stale, not the last rates shown on.
        if now - entry.heardAt <= Self.ratesStaleAfter, let first = entry.history.first,
            let last = entry.history.last
        {
            status.recentWindowMs = UInt64(max(0, (last.at - first.at).inMilliseconds))
            status.recentApplied = last.applied &- first.applied
            status.recentOutputs = last.outputs &- first.outputs
        }
        status.snapshotKnown = report.snapshotKnown
        if report.snapshotKnown {
            // Aged since the report, so that a silent consumer's snapshot ages too.
            status.snapshotAgeMs = report.snapshotAgeMs + status.progressAgeMs
        }
        return status
    }
}
