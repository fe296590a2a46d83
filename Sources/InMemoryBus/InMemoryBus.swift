import BureauSchemas
import Bus
import EventLog
import Guards
import InMemoryStores
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// A bus inside one process, with no daemon and no sockets: the twin of `ZeroMQBusClient`,
/// keeping the same promises (``EventBus``; `BusContractTests` runs one suite against both).
///
/// Built from the daemon's own pure parts: the ``Sequencer`` checks, deduplicates, positions
/// and stamps each request against an `InMemoryEventLog`, and each subscription follows with a
/// ``SubscriptionTracker``, reading the log to catch up and taking live publications while its
/// consumer has room (one that does not is caught up from the log when it has room again, as a
/// subscriber of the real bus is after its high-water mark).
///
/// Every connection made with ``connection(process:)`` shares one log, as processes share a
/// daemon. Nothing survives the process.
public final class InMemoryBus: EventBus {
    public let process: String
    private let core: Core
    private let subscriptions = Mutex<[Int]>([])
    private let closed = Atomic<Bool>(false)

    /// How this connection's subscriptions read events (as a client's option does).
    public let upcasting: EventUpcasting

    /// A new, empty bus, and a connection to it for `process`, whose subscriptions read events
    /// through `upcasting`.
    public init(process: String = "test", deduplicationWindow: Int = 100_000, upcasting: EventUpcasting = .none) {
        self.process = process
        self.upcasting = upcasting
        core = Core(deduplicationWindow: deduplicationWindow)
    }

    private init(process: String, core: Core, upcasting: EventUpcasting) {
        self.process = process
        self.core = core
        self.upcasting = upcasting
    }

    /// Another connection to the same bus, for another process name.
    public func connection(process: String, upcasting: EventUpcasting = .none) -> InMemoryBus {
        InMemoryBus(process: process, core: core, upcasting: upcasting)
    }

    /// The log's head.
    public var head: UInt64 { core.head }

    /// Every record committed, in order: what a test would read from the log files.
    public var records: [LogRecord] { core.records }

    public func publish(_ events: [OutgoingEvent]) async throws -> [PublishOutcome] {
        let envelopes = try events.map { try $0.envelopeBytes(process: process) }
        var outcomes: [PublishOutcome] = []
        for request in BusLimits.requests(envelopes) {
            outcomes += try await publish(envelopes: request).results.map { try PublishOutcome($0) }
        }
        return outcomes
    }

    public func publish(envelopes: [Data]) async throws -> Bureau_Bus_PublishAck {
        guard !closed.load(ordering: .acquiring) else { throw BusError.closed }
        guard !envelopes.isEmpty else {
            throw BusError.refused(
                code: .malformedRequest,
                message: "a publish request carries 1 to \(BusLimits.maxEnvelopesPerPublish) envelopes, not 0")
        }
        // As the ZeroMQ client: a batch frame (each envelope after its length) over the limit is not sent.
        let bytes = envelopes.reduce(0) { $0 + $1.count + BusLimits.batchBytesPerEnvelope }
        guard bytes <= BusLimits.maxRequestBytes else {
            throw BusError.requestTooLarge(bytes: bytes, limit: BusLimits.maxRequestBytes)
        }
        guard envelopes.count <= BusLimits.maxEnvelopesPerPublish else {
            throw BusError.refused(
                code: .tooLarge,
                message: "a publish request carries at most \(BusLimits.maxEnvelopesPerPublish) envelopes, "
                    + "not \(envelopes.count)")
        }
        return try core.publish(envelopes)
    }

    public func subscribe(_ filter: EventFilter, after position: UInt64, bufferCapacity: Int) -> EventSubscription {
        let core = self.core
        let id = core.nextSubscriptionID()
        let channel = SubscriptionChannel(capacity: max(1, bufferCapacity), after: position) { core.pump(id) }
        guard !closed.load(ordering: .acquiring) else {
            channel.push([.failure(.closed)])
            channel.finish()
            return EventSubscription(channel: channel) {}
        }
        subscriptions.withLock { $0.append(id) }
        core.add(
            id,
            Core.Follower(
                tracker: SubscriptionTracker(filter: upcasting.widening(filter), after: position), channel: channel))
        return EventSubscription(channel: channel, upcasting: upcasting) { core.remove(id) }
    }

    public func ping(timeout: Duration) async throws -> BusStatus {
        guard !closed.load(ordering: .acquiring) else { throw BusError.closed }
        return BusStatus(head: core.head, epoch: core.epoch, pid: getpid(), version: "in-memory")
    }

    public func report(_ progress: [Bureau_Bus_ConsumerProgress]) {
        guard !closed.load(ordering: .acquiring) else { return }
        core.report(progress)
    }

    public func statistics(timeout: Duration) async throws -> Bureau_Bus_BusStats {
        guard !closed.load(ordering: .acquiring) else { throw BusError.closed }
        var stats = try core.statistics()
        stats.pid = UInt32(bitPattern: getpid())
        stats.version = "in-memory"
        return stats
    }

    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for id in subscriptions.withLock({ $0 }) { core.remove(id) }
    }

    /// The bus all connections share: the log, the sequencer and the followers.
    /// Unchecked: every access to the log, the reader and the followers holds `state`'s lock.
    final class Core: @unchecked Sendable {
        struct Follower {
            var tracker: SubscriptionTracker
            let channel: SubscriptionChannel
            /// Ended because its cursor is past the log's head: it is given nothing more.
            var ended = false

            /// Tells the channel where the tracker is, after what it delivered was pushed.
            func noteProgress() {
                channel.advance(through: tracker.cursor, live: tracker.isLive)
            }
        }

        private struct State {
            var sequencer: Sequencer
            var followers: [Int: Follower] = [:]
            var nextID = 1
            var consumers = ConsumerTable()
            var eventsCommitted: UInt64 = 0
            var commits: UInt64 = 0
        }

        private let startedAt = ContinuousClock.now

        /// Takes in consumers' progress, as the daemon does.
        func report(_ progress: [Bureau_Bus_ConsumerProgress]) {
            let now = ContinuousClock.now
            state.withLock { state in
                for consumer in progress { state.consumers.record(consumer, at: now) }
            }
        }

        /// The bus's figures and its consumers' lag now, as the daemon's `stats` answers.
        ///
        /// Throws if the log cannot be read, or holds a record that is not an envelope: the log
        /// is in memory and its records were checked by the sequencer, so either is a fault of
        /// the bus, which a test must see, not a lag left unknown.
        func statistics() throws -> Bureau_Bus_BusStats {
            try state.withLock { state in
                let head = log.head
                for position in state.consumers.positionsWantingCommitTime(head: head) {
                    let event: StoredEvent
                    do {
                        let records = try reader.read(after: position, through: head, limit: 1, maxBytes: .max)
                        guard let record = records.first else { continue }
                        event = try StoredEvent(envelopeBytes: record.body)
                    } catch {
                        throw BusError.refused(
                            code: .readFailed, message: "could not read the log after \(position): \(error)")
                    }
                    state.consumers.learnCommitTime(after: position, event.commitTime)
                }
                var stats = Bureau_Bus_BusStats()
                stats.head = head
                stats.epoch = epoch
                stats.uptimeMs = UInt64(max(0, (ContinuousClock.now - startedAt).inMilliseconds))
                stats.eventsCommitted = state.eventsCommitted
                stats.commits = state.commits
                stats.subscribers = UInt64(state.followers.count)
                stats.consumers = state.consumers.statuses(head: head, now: .now, wallNow: .now)
                stats.timeMs = UInt64(max(0, (CommitTime.now - .zero).inMilliseconds))
                return stats
            }
        }

        let epoch = UInt64.random(in: 1...(1 << 53 - 1))
        private let log: InMemoryEventLog
        private let reader: any EventLogReader
        private let state: Mutex<State>

        init(deduplicationWindow: Int) {
            log = InMemoryEventLog(deduplicationWindow: deduplicationWindow)
            reader = log.makeReader()
            state = Mutex(
                State(
                    sequencer: Sequencer(
                        maxEnvelopeBytes: BusLimits.maxEnvelopeBytes, epochStart: 0, lastCommitTime: (0, 0))))
        }

        var head: UInt64 { state.withLock { _ in log.head } }
        var records: [LogRecord] {
            state.withLock { _ in
                // The in-memory log's reader does no I/O and never throws (it throws by its
                // protocol only), so `[]` here is never a failure read as an empty log.
                // Making this throwing would change the API its callers (tests) use.
                (try? reader.read(after: 0, through: log.head, limit: .max, maxBytes: .max)) ?? []
            }
        }

        func nextSubscriptionID() -> Int {
            state.withLock { state in
                defer { state.nextID += 1 }
                return state.nextID
            }
        }

        /// Sequences, appends and publishes one request, as the daemon's loop does; returns its answer.
        func publish(_ envelopes: [Data]) throws -> Bureau_Bus_PublishAck {
            try state.withLock { state in
                let time = CommitTime.now
                let batch = state.sequencer.sequence([envelopes], log: log, now: (time.seconds, time.nanos))
                if !batch.records.isEmpty {
                    try log.append(batch.records)
                    try log.commit()
                    state.eventsCommitted += UInt64(batch.records.count)
                    state.commits += 1
                    for id in state.followers.keys.sorted() {
                        guard var follower = state.followers[id] else { continue }
                        deliver(batch, to: &follower, packageHeads: state.sequencer.packageHeads)
                        // As the daemon's next heartbeat would: the head moves the cursor of a
                        // follower that wants none of the batch, so that its progress shows it.
                        if follower.tracker.isLive, !follower.ended,
                            follower.tracker.heartbeat(
                                head: log.head, epochStart: 0, packageHeads: state.sequencer.packageHeads) == .fetch
                        {
                            follower.channel.gaps.add(1, ordering: .relaxed)
                            catchUp(&follower)
                        }
                        follower.noteProgress()
                        state.followers[id] = follower
                    }
                }
                var ack = Bureau_Bus_PublishAck()
                ack.results = batch.results.first ?? []
                ack.head = log.head
                return ack
            }
        }

        func add(_ id: Int, _ follower: Follower) {
            state.withLock { state in
                var follower = follower
                catchUp(&follower)
                follower.noteProgress()
                state.followers[id] = follower
            }
        }

        func remove(_ id: Int) {
            let follower = state.withLock { $0.followers.removeValue(forKey: id) }
            follower?.channel.finish()
        }

        /// The consumer made room: go on where the follower stopped.
        func pump(_ id: Int) {
            state.withLock { state in
                guard var follower = state.followers[id] else { return }
                if follower.tracker.isLive {
                    // What was published while it had no room is noticed as a heartbeat would.
                    _ = follower.tracker.heartbeat(
                        head: log.head, epochStart: 0, packageHeads: state.sequencer.packageHeads)
                }
                catchUp(&follower)
                follower.noteProgress()
                state.followers[id] = follower
            }
        }

        /// Live publications, while the consumer has room; one it has no room for is dropped,
        /// as a PUB socket drops it at its high-water mark, and the tracker then reads the log.
        private func deliver(
            _ batch: Sequencer.Batch, to follower: inout Follower, packageHeads: [String: UInt64]
        ) {
            guard !follower.ended else { return }
            guard follower.tracker.isLive else { return catchUp(&follower) }
            for publication in batch.publications {
                // Dropped when the consumer has no room, as a PUB socket drops at its high-water mark.
                guard follower.channel.hasRoom else { return }
                let action = publication.type.topic.withUnsafeBytes { type in
                    follower.tracker.publication(
                        position: publication.position, previousInPackage: publication.previousInPackage, type: type)
                }
                switch action {
                case .deliver:
                    follower.channel.push([
                        .event(position: publication.position, envelope: Data(batch.body(of: publication)))
                    ])
                case .skip: continue
                case .fetch:
                    follower.channel.gaps.add(1, ordering: .relaxed)
                    return catchUp(&follower)
                }
            }
        }

        /// Reads the log after the follower's cursor while its consumer has room, as a
        /// subscriber's catch-up reads do; says when it reached the head.
        private func catchUp(_ follower: inout Follower) {
            while !follower.ended, !follower.tracker.isLive, follower.channel.hasRoom {
                let head = log.head
                // As the daemon refuses a read after its head (`ahead-of-log`).
                if follower.tracker.isAhead(ofHead: head) {
                    follower.ended = true
                    follower.channel.push([
                        .failure(.aheadOfLog(position: follower.tracker.cursor, head: head, epoch: epoch))
                    ])
                    follower.channel.finish()
                    return
                }
                var positions: [UInt64] = []
                var bodies: [Data] = []
                var scannedTo = follower.tracker.cursor
                let filter = follower.tracker.filter
                let records: [LogRecord]
                do {
                    records = try reader.read(
                        after: scannedTo, through: head,
                        limit: min(BusLimits.maxReadEvents, follower.channel.capacity),
                        maxBytes: BusLimits.maxReadBytes)
                } catch {
                    // Not an empty read: that would move the cursor to the head past what was
                    // not read. The subscription ends with the daemon's refusal of such a read.
                    follower.ended = true
                    follower.channel.push([
                        .failure(.refused(code: .readFailed, message: "could not read the log: \(error)"))
                    ])
                    follower.channel.finish()
                    return
                }
                for record in records {
                    scannedTo = record.position
                    if filter.matches(envelope: record.body) {
                        positions.append(record.position)
                        bodies.append(record.body)
                    }
                }
                if records.isEmpty { scannedTo = head }
                let (deliver, caughtUp) = follower.tracker.readReply(
                    positions: positions, scannedTo: scannedTo, head: head)
                var items = deliver.map {
                    SubscriptionChannel.Item.event(position: positions[$0], envelope: bodies[$0])
                }
                if caughtUp { items.append(.caughtUp(head: follower.tracker.cursor)) }
                follower.channel.push(items)
            }
        }
    }
}
