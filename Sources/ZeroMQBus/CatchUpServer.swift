import BureauSchemas
import Bus
import EventLog
import Guards
import Logging
import SwiftProtobuf
import ZeroMQ

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Serves reads of the log to subscribers catching up, on a thread of its own.
///
/// Reads go no further than the published head (committed, and handed to the live stream), so
/// a subscriber never sees from the log an event that is not committed, and a subscriber that
/// has a live event always finds the log reaching it. Each reply is bounded in events and bytes
/// (flow control: the subscriber asks for the next chunk when it has room).
final class CatchUpServer {
    private let sockets: [ZMQSocket]
    private let reader: any EventLogReader
    private let state: DaemonState
    private let stop: WakeSignal
    /// Rung by the memory watch: drop every connection of the read sockets.
    private let renewal: SocketRenewal?
    private let logger: Logger
    private var badInput: BadInputLog
    /// The log's directory, whose files' size it reports; nil for a log kept elsewhere.
    private let logDirectory: String?
    private var nextRefresh = ContinuousClock.now
    private var lastFootprint: ContinuousClock.Instant?
    /// The last measure of the log's size failed (said once until one succeeds).
    /// Failures in a row to measure the log's size, and to read the commit times lag is measured
    /// from: each said when it starts and when it ends.
    private var footprintFailures = FailureStreak()
    private var commitTimeFailures = FailureStreak()

    init(
        sockets: [ZMQSocket], reader: any EventLogReader, state: DaemonState, stop: WakeSignal,
        renewal: SocketRenewal? = nil, logDirectory: String? = nil, logger: Logger
    ) {
        self.renewal = renewal
        self.sockets = sockets
        self.reader = reader
        self.state = state
        self.stop = stop
        self.logDirectory = logDirectory
        self.logger = logger
        badInput = BadInputLog(logger: logger)
    }

    func run() {
        defer {
            for socket in sockets { socket.close() }
        }
        var poller = ZMQPoller()
        let items = sockets.map { poller.add($0) }
        let stopItem = poller.add(fileDescriptor: stop.fileDescriptor)
        let renewItem = renewal.map { poller.add(fileDescriptor: $0.signal.fileDescriptor) }
        while true {
            do {
                // Woken at least once a second, for the figures that change with time alone
                // (a silent consumer's lag).
                let wait = max(0, (nextRefresh - .now).inMilliseconds) + 1
                try poller.poll(timeout: Int(clamping: wait))
                if poller.isReadable(stopItem) { return }
                if let renewal, let renewItem, poller.isReadable(renewItem) {
                    do {
                        try renewal.perform(logger: logger)
                    } catch {
                        // Without its read socket the bus serves no reader: it stops as a whole,
                        // failed (the ingress loop commits what it holds and closes the log).
                        state.finish(error: error)
                        stop.ring()
                        return
                    }
                }
                if ContinuousClock.now >= nextRefresh { refresh() }
                for (index, item) in items.enumerated() where poller.isReadable(item) {
                    // Serve a few requests per socket per turn so that one busy client cannot starve the rest.
                    for _ in 0..<16 {
                        guard let frames = try sockets[index].receiveMessage(wait: false) else { break }
                        serve(frames, on: sockets[index])
                    }
                }
                badInput.summarizeIfDue()
            } catch let error as ZMQError where error.contextTerminated {
                return
            } catch {
                logger.error("the catch-up server failed", metadata: ["bus.error": "\(error)"])
                return
            }
        }
    }

    private func serve(_ frames: [Data], on socket: ZMQSocket) {
        switch RequestFrames.parse(frames) {
        case .failure(let problem):
            badInput.record(problem.message, socket: "read")
            send(
                on: socket, problem.identity, WireProtocol.error, problem.requestID,
                [errorReply(problem.code, problem.message)])
        case .success(let request):
            switch request.verb {
            case WireProtocol.read:
                serveRead(request, on: socket)
            case WireProtocol.report:
                record(request)
            case WireProtocol.stats:
                refresh()
                let stats = serialized(statistics(), "the stats")
                send(on: socket, request.identity, WireProtocol.stats, request.requestID, [stats])
            case WireProtocol.ping:
                let pong = serialized(state.pong(head: state.publishedHead.load(ordering: .acquiring)), "a pong")
                send(on: socket, request.identity, WireProtocol.pong, request.requestID, [pong])
            default:
                let message = "unknown verb '\(request.verb)' on the read socket: use read, ping, report or stats"
                badInput.record(message, socket: "read")
                send(
                    on: socket, request.identity, WireProtocol.error, request.requestID,
                    [errorReply(.unknownVerb, message)])
            }
        }
    }

    /// Answers a `read`: the events after its position, or why not (a malformed request, a
    /// reader ahead of this log, a log that cannot be read).
    private func serveRead(_ request: RequestFrames, on socket: ZMQSocket) {
        guard request.arguments.count == 1,
            let read = try? Bureau_Bus_ReadRequest(serializedBytes: request.arguments[0])
        else {
            let message = "a read request carries one ReadRequest frame"
            badInput.record(message, socket: "read")
            send(
                on: socket, request.identity, WireProtocol.error, request.requestID,
                [errorReply(.malformedRequest, message)])
            return
        }
        let head = state.publishedHead.load(ordering: .acquiring)
        if read.afterGap {
            state.metrics.subscriberGaps.increment()
            state.figures.withLock { $0.subscriberGaps += 1 }
        }
        guard read.after <= head else {
            // The reader has what this log never published: another log, or an older copy.
            var error = Bureau_Bus_ErrorReply()
            error.code = BusErrorCode.aheadOfLog.rawValue
            error.message =
                "a read after position \(read.after), but the log ends at position \(head) "
                + "(daemon epoch \(state.epoch)): this is not the log the reader read"
            error.head = head
            error.epoch = state.epoch
            send(
                on: socket, request.identity, WireProtocol.error, request.requestID,
                [serialized(error, "an ahead-of-log error")])
            return
        }
        do {
            var (header, bodies) = try answer(read)
            // One frame for the lot when the client can take it: a frame per envelope cost
            // libzmq's threads and the client a message part each.
            header.batched = read.batched
            state.metrics.catchUpReads.increment()
            state.metrics.catchUpEvents.increment(by: bodies.count)
            send(
                on: socket, request.identity, WireProtocol.events, request.requestID,
                [try header.serializedData()] + (read.batched ? [WireProtocol.batch(bodies)] : bodies))
        } catch {
            state.metrics.storeError("read")
            logger.error("could not read the log", metadata: ["bus.error": "\(error)"])
            send(
                on: socket, request.identity, WireProtocol.error, request.requestID,
                [errorReply(.readFailed, "could not read the log: \(error)")])
        }
    }

    /// Takes a consumer's `report` of how far it has got (never answered).
    private func record(_ request: RequestFrames) {
        guard request.arguments.count == 1,
            let report = try? Bureau_Bus_ProgressReport(serializedBytes: request.arguments[0])
        else {
            // Not answered (a report never is); counted and summarised like other bad input.
            badInput.record("a report carries one ProgressReport frame", socket: "read")
            return
        }
        let now = ContinuousClock.now
        state.metrics.progressReports.increment()
        state.figures.withLock { figures in
            for consumer in report.consumers { figures.consumers.record(consumer, at: now) }
        }
    }

    /// Reads what a request asks for, filtering by type if it names prefixes.
    func answer(_ request: Bureau_Bus_ReadRequest) throws -> (Bureau_Bus_ReadReply, [Data]) {
        let through = state.publishedHead.load(ordering: .acquiring)
        let maxEvents =
            request.maxEvents == 0
            ? BusLimits.maxReadEvents : min(Int(request.maxEvents), BusLimits.maxReadEvents)
        let maxBytes =
            request.maxBytes == 0 ? BusLimits.maxReadBytes : min(Int(request.maxBytes), BusLimits.maxReadBytes)
        let filter = EventFilter(prefixes: request.typePrefixes)
        var reply = Bureau_Bus_ReadReply()
        reply.head = through
        reply.scannedTo = request.after
        var bodies: [Data] = []
        var bytes = 0
        var scanned = 0
        guard request.after < through else { return (reply, bodies) }
        var after = request.after
        reading: while after < through, scanned < BusLimits.maxReadScan {
            let records = try reader.read(
                after: after, through: through, limit: filter.prefixes.isEmpty ? maxEvents : 1024, maxBytes: maxBytes)
            guard let last = records.last else { break }
            for record in records {
                scanned += 1
                if filter.matches(envelope: record.body) {
                    bodies.append(record.body)
                    bytes += record.body.count
                }
                reply.scannedTo = record.position
                if bodies.count >= maxEvents || bytes >= maxBytes { break reading }
            }
            after = last.position
        }
        // Everything up to the published head is in the log; a read that finds nothing there
        // would have the subscriber ask again forever.
        if reply.scannedTo == request.after {
            throw EventLogError.corruptRecord(
                segment: "", offset: 0, position: request.after + 1,
                reason: "position \(request.after + 1) is committed but could not be read")
        }
        return (reply, bodies)
    }

    /// About once a second, and before answering `stats`: samples the counters for the recent
    /// rates, reads the commit time of the oldest event each lagging consumer has not handled,
    /// and sets every consumer's lag gauges, which keep growing for one that stopped reporting.
    private func refresh() {
        let now = ContinuousClock.now
        nextRefresh = now + .seconds(1)
        let head = state.publishedHead.load(ordering: .acquiring)
        let wanted = state.figures.withLock { figures in
            figures.sample(
                events: state.committedEvents.load(ordering: .relaxed),
                commits: state.committedBatches.load(ordering: .relaxed), at: now)
            return figures.consumers.positionsWantingCommitTime(head: head)
        }
        var learned: [(UInt64, CommitTime)] = []
        var unread: (position: UInt64, error: any Error)?
        for position in wanted.prefix(64) {
            // A commit time not learned now leaves that lag unknown until a later refresh reads it.
            do {
                guard let record = try reader.read(after: position, through: head, limit: 1, maxBytes: .max).first
                else { continue }
                learned.append((position, try StoredEvent(envelopeBytes: record.body).commitTime))
            } catch {
                unread = (position, error)
            }
        }
        if let unread {
            if commitTimeFailures.failed() {
                logger.error(
                    "cannot read the commit time lag is measured from; those consumers' lag stays unknown",
                    metadata: ["bus.position": "\(unread.position + 1)", "bus.error": "\(unread.error)"])
            }
        } else if commitTimeFailures.succeeded() > 0 {
            logger.notice("the commit times lag is measured from can be read again")
        }
        if let logDirectory, lastFootprint.map({ now - $0 >= .seconds(5) }) ?? true {
            lastFootprint = now
            measureFootprint(of: logDirectory)
        }
        let statuses = state.figures.withLock { figures in
            for (position, time) in learned { figures.consumers.learnCommitTime(after: position, time) }
            return figures.consumers.statuses(head: head, now: now, wallNow: .now)
        }
        state.metrics.consumersSeen(statuses)
        state.metrics.subscribers.record(Self.liveSubscribers(statuses))
    }

    /// The log's size on disk, for `bureau stats` and the metrics. A directory that cannot be
    /// listed is said once (at warning, until it can be again, which is said too), and `bureau
    /// stats` shows its size as unknown rather than the last one measured; the gauges, which
    /// have no "unknown", keep the last.
    private func measureFootprint(of logDirectory: String) {
        do {
            let footprint = try LogFootprint.measure(directory: logDirectory)
            if footprintFailures.succeeded() > 0 {
                logger.notice(
                    "the log's size can be measured again", metadata: ["bus.log_directory": "\(logDirectory)"])
            }
            state.metrics.logBytes.record(footprint.bytes)
            state.metrics.logSegments.record(footprint.segments)
            state.figures.withLock { $0.footprint = (footprint.bytes, footprint.segments) }
        } catch {
            if footprintFailures.failed() {
                logger.warning(
                    "cannot measure the log's size; bureau stats shows it as unknown, the gauges the last size",
                    metadata: ["bus.log_directory": "\(logDirectory)", "bus.error": "\(error)"])
            }
            state.figures.withLock { $0.footprint = nil }
        }
    }

    /// The subscribers following the live stream: consumers whose last report, at most a few
    /// seconds old, says so. (Counting the events socket's connections would take a socket
    /// monitor, whose blocking sends can stall libzmq's I/O thread.)
    static func liveSubscribers(_ statuses: [Bureau_Bus_ConsumerStatus]) -> Int {
        statuses.filter { $0.live && $0.progressAgeMs <= 5000 }.count
    }

    /// The answer to `stats`.
    private func statistics() -> Bureau_Bus_BusStats {
        let now = ContinuousClock.now
        let head = state.publishedHead.load(ordering: .acquiring)
        var stats = Bureau_Bus_BusStats()
        stats.head = head
        stats.epoch = state.epoch
        stats.pid = UInt32(bitPattern: state.pid)
        stats.version = state.version
        stats.uptimeMs = UInt64(max(0, (now - state.startedAt).inMilliseconds))
        stats.eventsCommitted = UInt64(state.committedEvents.load(ordering: .relaxed))
        stats.commits = UInt64(state.committedBatches.load(ordering: .relaxed))
        stats.timeMs = UInt64(max(0, (CommitTime.now - .zero).inMilliseconds))
        state.figures.withLock { figures in
            if let first = figures.samples.first, let last = figures.samples.last {
                stats.recentWindowMs = UInt64(max(0, (last.at - first.at).inMilliseconds))
                stats.recentEvents = UInt64(max(0, last.events - first.events))
                stats.recentCommits = UInt64(max(0, last.commits - first.commits))
            }
            stats.syncP50Us = figures.syncs.percentile(0.5)
            stats.syncP99Us = figures.syncs.percentile(0.99)
            stats.ackP50Us = figures.acks.percentile(0.5)
            stats.ackP99Us = figures.acks.percentile(0.99)
            stats.subscribers = UInt64(
                Self.liveSubscribers(figures.consumers.statuses(head: head, now: now, wallNow: .now)))
            stats.subscriberGaps = UInt64(figures.subscriberGaps)
            if let footprint = figures.footprint {
                stats.logSizeKnown = true
                stats.logBytes = UInt64(max(0, footprint.bytes))
                stats.logSegments = UInt64(footprint.segments)
            }
            stats.consumers = figures.consumers.statuses(head: head, now: now, wallNow: .now)
        }
        return stats
    }

    private func errorReply(_ code: BusErrorCode, _ message: String) -> Data {
        var error = Bureau_Bus_ErrorReply()
        error.code = code.rawValue
        error.message = message
        return serialized(error, "an error reply")
    }

    /// `message`'s bytes; empty, said at error level, in the (proto3: never seen) case that it
    /// cannot be encoded, so that an answer that reads as empty is explained in the log.
    private func serialized(_ message: some SwiftProtobuf.Message, _ what: String) -> Data {
        do {
            return try message.serializedData()
        } catch {
            logger.error("could not encode \(what); answered an empty one", metadata: ["bus.error": "\(error)"])
            return Data()
        }
    }

    /// Never waits: a reader that has gone or stopped reading asks again when its read times
    /// out. What is not sent is counted.
    private func send(on socket: ZMQSocket, _ identity: Data, _ verb: String, _ requestID: Data, _ frames: [Data]) {
        let sent = try? socket.send(
            multipart: [identity, Data(WireProtocol.version.utf8), Data(verb.utf8), requestID] + frames, wait: false)
        if sent != true { state.metrics.repliesUnsent.increment() }
    }
}
