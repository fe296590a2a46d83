import BureauSchemas
import Bus
import Guards
import Metrics
import Synchronization

/// The bus daemon's metrics, through swift-metrics: handles made once and shared by the
/// daemon's threads. The ingress loop records per commit and per batch, never per event
/// (INTERNALS.md, "The daemon's hot paths"); the catch-up thread records reads and, about once a
/// second, every consumer's lag as the bus sees it.
final class BusMetrics: Sendable {
    let eventsCommitted: Counter
    let commits: Counter
    let requests: Counter
    let batchEvents: Recorder
    let fdatasync: Timer
    let publishAck: Timer
    let head: Gauge
    let logBytes: Gauge
    let logSegments: Gauge
    let subscribers: Gauge
    let subscriberGaps: Counter
    let catchUpReads: Counter
    let catchUpEvents: Counter
    let progressReports: Counter
    let storeReopens: Counter
    let repliesUnsent: Counter
    let publicationsUnsent: Counter
    let memoryDrops: Counter
    let active: Gauge
    private let committed: Counter
    private let duplicates: Counter
    private let factory: any MetricsFactory
    /// Counters by label values made on first use: reasons are a short fixed list (``PublishRejectionCode``, ``BusErrorCode``).
    private let labelled = Mutex<[String: Counter]>([:])
    /// Each consumer's lag gauges, made when it first reports and dropped when it leaves.
    private let consumers = Mutex<[ConsumerTable.Key: ConsumerGauges]>([:])

    struct ConsumerGauges: Sendable {
        let position: Gauge
        let lagEvents: Gauge
        /// Made once the lag's time is known: before that it is absent, not 0.
        var lagSeconds: Gauge?
        let progressAge: Gauge
        let live: Gauge
    }

    /// Metric names and what they mean: the metric reference (README, "Watching it run").
    static let help: [String: String] = [
        "bureau_bus_events_committed_total":
            "Events the bus committed (stored, durable as the policy says, published).",
        "bureau_bus_commits_total":
            "Commits the bus made: one fdatasync each with the always policy, covering every batch written meanwhile.",
        "bureau_bus_publish_requests_total": "Publish requests the bus took in.",
        "bureau_bus_publish_outcomes_total":
            "What the bus did with each event sent to it (committed, duplicate, rejected) or with a request it refused whole (refused), by reason: for a rejection one of "
            + PublishRejectionCode.allCases.map(\.rawValue).joined(separator: ", ")
            + " (not-stored: a full disk); for a refusal its error code.",
        "bureau_bus_commit_batch_events":
            "Events per written batch: how many one wake-up of the ingress loop stored together.",
        "bureau_bus_fdatasync_seconds": "How long each fdatasync of the log took.",
        "bureau_bus_publish_ack_seconds":
            "From a batch's requests reaching the bus to their acknowledgement (written, durable, published).",
        "bureau_bus_head_position": "The last position the bus published.",
        "bureau_bus_log_bytes": "Bytes in the log's segment files (absent for a log kept in PostgreSQL).",
        "bureau_bus_log_segments": "Segment files of the log (absent for a log kept in PostgreSQL).",
        "bureau_bus_subscribers":
            "Consumers whose last progress report, at most 5 s old, says they follow the live stream; subscribers that report no progress (`bureau log tail`, `bureau top`, a client of its own) are not counted.",
        "bureau_bus_subscriber_gaps_total":
            "Times a subscriber was dropped from the live stream (publications lost at its high-water mark or in transit) and read the log to fill the gap.",
        "bureau_bus_catchup_reads_total": "Catch-up reads of the log the bus served.",
        "bureau_bus_catchup_events_total": "Events the bus served in catch-up reads.",
        "bureau_bus_progress_reports_total": "Progress reports consumers sent the bus.",
        "bureau_bus_store_errors_total":
            "Failures of the log's store: refused (a full disk; publishes refused, the log intact), failed (the daemon stops or reopens it) or read (a catch-up read failed; the reader is answered read-failed and asks again).",
        "bureau_bus_store_reopens_total": "Times the daemon reopened its store after it failed (PostgreSQL).",
        "bureau_bus_replies_unsent_total":
            "Answers the bus could not hand to a client's socket (the client gone, or not reading); the client asks again or its request times out.",
        "bureau_bus_publications_unsent_total":
            "Live-stream messages (events, heartbeats) a publication socket refused: closed, or its context ended, never a subscriber that is behind (it is dropped and reads the log); subscribers read what they miss from the log.",
        "bureau_bus_memory_drops_total":
            "Times the daemon dropped every connection because its memory went over --max-memory-mib (a peer sending a message of frames without end; README, Limits).",
        "bureau_bus_active": "1 while this daemon holds the log and serves, 0 while it waits as a standby.",
        "bureau_consumer_lag_events":
            "Events between the head and the consumer's last reported position, as the bus sees it: it grows while the consumer is stopped.",
        "bureau_consumer_lag_seconds":
            "Age of the oldest event the consumer has not handled, as the bus sees it: it grows while the consumer is stopped.",
        "bureau_consumer_progress_age_seconds": "Seconds since the consumer last reported its progress to the bus.",
        "bureau_consumer_reported_position": "The position the consumer last reported to the bus.",
        "bureau_consumer_reported_live": "1 if the consumer last reported following the live stream, 0 if catching up.",
    ]

    init(factory: any MetricsFactory) {
        self.factory = factory
        eventsCommitted = Counter(label: "bureau_bus_events_committed_total", factory: factory)
        commits = Counter(label: "bureau_bus_commits_total", factory: factory)
        requests = Counter(label: "bureau_bus_publish_requests_total", factory: factory)
        batchEvents = Recorder(label: "bureau_bus_commit_batch_events", factory: factory)
        fdatasync = Timer(label: "bureau_bus_fdatasync_seconds", factory: factory)
        publishAck = Timer(label: "bureau_bus_publish_ack_seconds", factory: factory)
        head = Gauge(label: "bureau_bus_head_position", factory: factory)
        logBytes = Gauge(label: "bureau_bus_log_bytes", factory: factory)
        logSegments = Gauge(label: "bureau_bus_log_segments", factory: factory)
        subscribers = Gauge(label: "bureau_bus_subscribers", factory: factory)
        subscriberGaps = Counter(label: "bureau_bus_subscriber_gaps_total", factory: factory)
        catchUpReads = Counter(label: "bureau_bus_catchup_reads_total", factory: factory)
        catchUpEvents = Counter(label: "bureau_bus_catchup_events_total", factory: factory)
        progressReports = Counter(label: "bureau_bus_progress_reports_total", factory: factory)
        storeReopens = Counter(label: "bureau_bus_store_reopens_total", factory: factory)
        repliesUnsent = Counter(label: "bureau_bus_replies_unsent_total", factory: factory)
        publicationsUnsent = Counter(label: "bureau_bus_publications_unsent_total", factory: factory)
        memoryDrops = Counter(label: "bureau_bus_memory_drops_total", factory: factory)
        active = Gauge(label: "bureau_bus_active", factory: factory)
        committed = Counter(
            label: "bureau_bus_publish_outcomes_total", dimensions: [("outcome", "committed"), ("reason", "")],
            factory: factory)
        duplicates = Counter(
            label: "bureau_bus_publish_outcomes_total", dimensions: [("outcome", "duplicate"), ("reason", "")],
            factory: factory)
    }

    /// One written batch: `committed` events stored, `duplicates` answered with the position they have.
    func batchWritten(committed count: Int, duplicates duplicateCount: Int) {
        if count > 0 {
            committed.increment(by: count)
            batchEvents.record(count)
        }
        if duplicateCount > 0 { duplicates.increment(by: duplicateCount) }
    }

    /// `count` events rejected, under the code of the reason the sequencer (or, for a full
    /// disk, the ingress loop) gave.
    func rejected(_ code: PublishRejectionCode, count: Int = 1) {
        guard count > 0 else { return }
        counter("bureau_bus_publish_outcomes_total", [("outcome", "rejected"), ("reason", code.rawValue)])
            .increment(by: count)
    }

    /// A request refused whole, with the error code it was answered (README, "Other requests and errors").
    func refused(code: BusErrorCode) {
        counter("bureau_bus_publish_outcomes_total", [("outcome", "refused"), ("reason", Self.boundedCode(code))])
            .increment()
    }

    /// The store failed: `refused` (a full disk, the log intact), `failed`, or `read` (a catch-up read).
    func storeError(_ kind: String) {
        counter("bureau_bus_store_errors_total", [("kind", kind)]).increment()
    }

    private func counter(_ label: String, _ dimensions: [(String, String)]) -> Counter {
        let key = label + dimensions.map { "|\($0.1)" }.joined()
        return labelled.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = Counter(label: label, dimensions: dimensions, factory: factory)
            counters[key] = counter
            return counter
        }
    }

    /// The refusal codes the daemon answers; anything else is counted as `other`.
    static func boundedCode(_ code: BusErrorCode) -> String {
        BusErrorCode.known.contains(code) ? code.rawValue : "other"
    }

    /// Sets every reporting consumer's lag gauges from the bus's view now; drops the gauges of
    /// consumers that left.
    func consumersSeen(_ statuses: [Bureau_Bus_ConsumerStatus]) {
        consumers.withLock { gauges in
            var present = Set<ConsumerTable.Key>()
            for status in statuses {
                let key = ConsumerTable.Key(consumer: status.consumer, process: status.process)
                present.insert(key)
                var handles =
                    gauges[key]
                    ?? {
                        let dimensions = [("module", status.consumer), ("process", status.process)]
                        let made = ConsumerGauges(
                            position: Gauge(
                                label: "bureau_consumer_reported_position", dimensions: dimensions, factory: factory),
                            lagEvents: Gauge(
                                label: "bureau_consumer_lag_events", dimensions: dimensions, factory: factory),
                            lagSeconds: nil,
                            progressAge: Gauge(
                                label: "bureau_consumer_progress_age_seconds", dimensions: dimensions,
                                factory: factory),
                            live: Gauge(
                                label: "bureau_consumer_reported_live", dimensions: dimensions, factory: factory))
                        gauges[key] = made
                        return made
                    }()
                handles.position.record(Double(status.position))
                handles.lagEvents.record(Double(status.lagEvents))
                // Unknown is absent, never 0 and never a stale value: made when first known, and
                // taken away again when the bus can no longer tell (INTERNALS.md, "Lag is the bus's to tell").
                if !status.lagTimeKnown, let stale = handles.lagSeconds {
                    stale.destroy()
                    handles.lagSeconds = nil
                    gauges[key] = handles
                }
                if status.lagTimeKnown {
                    if handles.lagSeconds == nil {
                        handles.lagSeconds = Gauge(
                            label: "bureau_consumer_lag_seconds",
                            dimensions: [("module", status.consumer), ("process", status.process)], factory: factory)
                        gauges[key] = handles
                    }
                    handles.lagSeconds?.record(Duration.milliseconds(status.lagMs).inSeconds)
                }
                handles.progressAge.record(Duration.milliseconds(status.progressAgeMs).inSeconds)
                handles.live.record(status.live ? 1 : 0)
            }
            for (key, handles) in gauges where !present.contains(key) {
                for gauge in [handles.position, handles.lagEvents, handles.progressAge, handles.live] {
                    gauge.destroy()
                }
                handles.lagSeconds?.destroy()
                gauges.removeValue(forKey: key)
            }
        }
    }
}
