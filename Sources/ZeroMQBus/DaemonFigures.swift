import BureauSchemas
import Bus
import Guards

/// What the daemon's `stats` answer is made of beyond its counters: the last durations of its
/// fdatasyncs and acknowledgements (for their percentiles), samples of its counters (for its
/// rates), and the consumers that report to it. Shared by the daemon's threads under a lock
/// (``DaemonState/figures``), touched once per commit and once per report.
struct DaemonFigures: Sendable {
    /// The last fdatasync durations and publish-to-acknowledgement latencies, in microseconds.
    var syncs = Reservoir(capacity: 1024)
    var acks = Reservoir(capacity: 1024)
    /// (when, events committed, commits) about once a second, for the recent rates.
    var samples: [(at: ContinuousClock.Instant, events: Int, commits: Int)] = []
    var consumers = ConsumerTable()
    var subscriberGaps = 0
    var footprint: (bytes: Int64, segments: Int)?

    /// How far back the recent rates look.
    static let window: Duration = .seconds(5)

    mutating func sample(events: Int, commits: Int, at now: ContinuousClock.Instant) {
        samples.append((now, events, commits))
        if let cut = samples.firstIndex(where: { now - $0.at <= Self.window }), cut > 0 {
            samples.removeFirst(cut)
        }
    }

    /// A fixed number of the latest values, for percentiles.
    struct Reservoir: Sendable {
        private var values: [UInt64] = []
        private var next = 0
        let capacity: Int

        init(capacity: Int) { self.capacity = capacity }

        mutating func add(_ value: UInt64) {
            if values.count < capacity {
                values.append(value)
            } else {
                values[next] = value
                next = (next + 1) % capacity
            }
        }

        /// The value below which `fraction` of the kept ones lie; 0 when none is kept.
        func percentile(_ fraction: Double) -> UInt64 {
            guard !values.isEmpty else { return 0 }
            let sorted = values.sorted()
            let index = min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)
            return sorted[max(0, index)]
        }
    }
}
