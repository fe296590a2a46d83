import BureauSchemas
import Bus
import EventLog
import Guards
import Logging
import SwiftProtobuf
import Tracing
import ZeroMQ

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// The sequencer's loop: receives publish requests, appends, makes durable, publishes, acknowledges.
///
/// Runs on a thread of its own that owns the ingress ROUTER sockets, the PUB sockets and the
/// log's writer. Each wake-up drains every request waiting (up to a cap) into one batch and
/// writes it.
///
/// The fdatasync of a commit runs on the log's sync thread where the log can do that
/// (``EventLog/beginCommit(whenFinished:)``): while it runs, the loop goes on taking requests in
/// and writing their batches, and holds back what they publish and answer. When it has
/// finished, the batches it covered are published and answered in order, and one commit
/// begins for everything written meanwhile (group commit: one fdatasync covers every batch
/// written while the last one ran). Nothing is published or acknowledged before the commit
/// that covers it has finished.
final class IngressLoop {
    private let ingress: [ZMQSocket]
    private let events: [ZMQSocket]
    private let log: any EventLog
    private var sequencer: Sequencer
    private let state: DaemonState
    private let stop: WakeSignal
    /// Rung by the memory watch: drop every connection of the ingress and events sockets.
    private let renewal: SocketRenewal?
    private let heartbeatInterval: Duration
    private let durability: Durability
    private var logger: Logger
    private var badInput: BadInputLog

    /// The most events one wake-up takes in; more waiting requests are taken next time.
    private let maxEventsPerBatch = 32_768
    /// The most bytes of envelopes one wake-up takes in, so that what a batch holds (and the
    /// log's write buffer) stays bounded whatever producers send.
    private let maxBytesPerBatch = 16 << 20
    /// The most messages one wake-up reads from a socket, whatever they hold, so that a flood
    /// of bad input cannot hold back the batch that valid requests wait in.
    private let maxMessagesPerDrain = 4096
    /// Whether the last batch found the disk full, so that it is said once, and its end too.
    private var diskFull = false
    /// Since when, and how many requests were refused for it: what the report of its end says.
    private var diskFullSince = ContinuousClock.now
    private var refusedWhileFull = 0
    /// The daemon's own `ErrorRaised` events (a repaired tail, a full disk that passed), committed
    /// with the next batch, or on their own at the next wake-up.
    private var reports: [OutgoingEvent]
    private let reporter = ErrorReporter(module: "bus", process: "bus")
    /// Recent refusals for a full disk, so that a retry of a refused request gets the same answer.
    private var answers = RequestAnswerCache()
    /// The publish requests admitted lately, for the ones that name a request they follow.
    private var recentRequests = RecentRequests()
    /// Builds the publication messages of each committed batch.
    private var publications = PublicationBatcher()
    /// When memory freed since was last handed back to the system.
    private var lastTrim = ContinuousClock.now
    /// The buffer each batch's records are built in, kept from batch to batch.
    private var recordBuffer = RecordBatch()
    /// The publish-to-acknowledgement latencies of one commit's batches, kept from commit to commit.
    private var ackLatencies: [UInt64] = []
    /// Rung by the log's sync thread when the commit under way has finished.
    private let commitFinished: WakeSignal
    /// The commit under way and the batches it makes durable, in order.
    private var committing: (commit: PendingCommit, batches: [WrittenBatch])?
    /// Batches written since it began, for the next commit.
    private var written: [WrittenBatch] = []
    /// The bytes ``committing`` and ``written`` hold back (publications, answers).
    private var heldBytes = 0
    /// Past this many bytes held back, no request is taken in until the commit under way has
    /// finished, so that a slow disk bounds memory rather than letting it grow (by at most one
    /// wake-up's batch past it).
    private let maxHeldBytes = 64 << 20
    /// The last position published, and each package's as of then: what pings and heartbeats say.
    private var publishedHead: UInt64
    private var publishedPackageHeads: [String: UInt64] = [:]

    /// A batch in the log whose commit has not finished yet: what to publish and answer once it has.
    private struct WrittenBatch {
        /// The log's head after it.
        var head: UInt64
        var packageHeads: [String: UInt64]
        var events: Int
        /// When the wake-up that took its requests in began: what publish-to-ack latency counts from.
        var received = ContinuousClock.now
        /// The publication messages' frames, one after another, in one buffer.
        var frames: [UInt8] = []
        /// Each publication message: its topic and where its frame lies in ``frames``.
        var messages: [(topic: Data, frame: Range<Int>)] = []
        var answers: [Answer]
        /// Its traced events' commit spans, ended once it is published (none when tracing is off).
        var spans: [any Span] = []

        /// What it holds in memory, about.
        var bytes: Int {
            frames.capacity + answers.reduce(0) { $0 + $1.body.count + $1.identity.count + 64 }
        }
    }

    /// An acknowledgement to send.
    private struct Answer {
        let socket: Int
        let identity: Data
        let requestID: Data
        let body: Data
    }

    init(
        ingress: [ZMQSocket], events: [ZMQSocket], log: any EventLog, sequencer: Sequencer, state: DaemonState,
        stop: WakeSignal, commitFinished: WakeSignal, renewal: SocketRenewal? = nil,
        configuration: BusDaemon.Configuration, reports: [OutgoingEvent] = [], logger: Logger
    ) {
        self.renewal = renewal
        self.commitFinished = commitFinished
        publishedHead = log.head
        self.reports = reports
        self.ingress = ingress
        self.events = events
        self.log = log
        self.sequencer = sequencer
        self.state = state
        self.stop = stop
        heartbeatInterval = configuration.heartbeatInterval
        durability = configuration.durability
        self.logger = logger
        badInput = BadInputLog(logger: logger)
        Self.largeAllocationsAreUnmappedWhenFreed
    }

    private struct Request {
        let socket: Int
        let identity: Data
        let requestID: Data
        let envelopes: EnvelopeBatch
        /// The request this one must be stored after (``WireProtocol/publish``'s optional frame).
        let follows: UInt64?

        /// The daemon's own events: no socket to answer on.
        static func own(_ envelopes: [Data]) -> Request {
            Request(
                socket: -1, identity: Data(), requestID: Data(), envelopes: EnvelopeBatch(envelopes), follows: nil)
        }

        var isOwn: Bool { socket < 0 }
    }

    /// Runs until the stop signal rings or the log fails; closes its sockets either way.
    func run() throws {
        defer {
            for socket in ingress + events { socket.close() }
        }
        var poller = ZMQPoller()
        let ingressItems = ingress.map { poller.add($0) }
        let stopItem = poller.add(fileDescriptor: stop.fileDescriptor)
        let commitItem = poller.add(fileDescriptor: commitFinished.fileDescriptor)
        let renewItem = renewal.map { poller.add(fileDescriptor: $0.signal.fileDescriptor) }
        let clock = ContinuousClock()
        var nextHeartbeat = clock.now
        var pending: [Request] = []
        while true {
            var wait = Int(clamping: max(0, (nextHeartbeat - clock.now).inMilliseconds))
            if case .interval(let milliseconds) = durability { wait = min(wait, milliseconds) }
            let taking = heldBytes < maxHeldBytes
            for item in ingressItems { poller.setReadable(item, taking) }
            try poller.poll(timeout: wait)
            if poller.isReadable(stopItem) {
                try commitEverything()
                break
            }
            // Finished first, then this wake-up's requests are written, then the next commit
            // begins: it covers them too.
            if poller.isReadable(commitItem) { try finishCommit() }
            if let renewal, let renewItem, poller.isReadable(renewItem) { try renewal.perform(logger: logger) }
            var budget = Budget(events: maxEventsPerBatch, bytes: maxBytesPerBatch)
            for (index, item) in ingressItems.enumerated() where taking && poller.isReadable(item) {
                try drain(socket: index, into: &pending, budget: &budget)
            }
            if !pending.isEmpty || !reports.isEmpty {
                try process(pending)
                pending.removeAll(keepingCapacity: true)
            }
            try commitWritten()
            if clock.now >= nextHeartbeat {
                try publishHeartbeat()
                nextHeartbeat = clock.now + heartbeatInterval
                trimMemoryIfDue()
            }
            try log.syncIfDue()
            badInput.summarizeIfDue()
        }
    }

    /// What one wake-up may still take in.
    private struct Budget {
        var events: Int
        var bytes: Int
        var exhausted: Bool { events <= 0 || bytes <= 0 }
    }

    /// Receives the requests waiting on one socket; answers pings and bad input at once.
    private func drain(socket index: Int, into pending: inout [Request], budget: inout Budget) throws {
        let socket = ingress[index]
        var messages = 0
        while !budget.exhausted, messages < maxMessagesPerDrain, let received = try receiveRequest(on: socket) {
            messages += 1
            switch received {
            case .failure(let problem):
                badInput.record(problem.message, socket: "ingress")
                refuse(on: socket, to: problem.identity, requestID: problem.requestID, problem.code, problem.message)
            case .success(let request):
                switch request.verb {
                case WireProtocol.publish:
                    let envelopes: EnvelopeBatch
                    let follows: UInt64?
                    switch publishEnvelopes(request) {
                    case .success(let split):
                        (envelopes, follows) = split
                    case .failure(let refusal):
                        // An error, not an ack of one rejection per envelope: the request may
                        // hold any number of envelopes, and the answer must stay small.
                        badInput.record(refusal.message, socket: "ingress")
                        refuse(
                            on: socket, to: request.identity, requestID: request.requestID, refusal.code,
                            refusal.message)
                        continue
                    }
                    if !answers.isEmpty,
                        let answer = answers.answer(
                            to: request.requestID, fingerprint: RequestAnswerCache.fingerprint(of: envelopes))
                    {
                        // A retry of a request refused for a full disk: the same refusal, so that
                        // an event answered REJECTED cannot be committed by a retry still in flight.
                        // Behind what is held: the answer may say DUPLICATE of an event whose
                        // commit has not finished.
                        hold(
                            WrittenBatch(
                                head: publishedHead, packageHeads: publishedPackageHeads, events: 0,
                                answers: [
                                    Answer(
                                        socket: index, identity: request.identity, requestID: request.requestID,
                                        body: answer)
                                ]))
                        continue
                    }
                    pending.append(
                        Request(
                            socket: index, identity: request.identity, requestID: request.requestID,
                            envelopes: envelopes, follows: follows))
                    budget.events -= envelopes.count
                    budget.bytes -= request.argumentBytes
                case WireProtocol.ping:
                    reply(on: socket, to: request.identity, verb: WireProtocol.pong, requestID: request.requestID) {
                        state.pong(head: publishedHead)
                    }
                default:
                    let message = "unknown verb '\(request.verb)' on the ingress socket: use publish or ping"
                    badInput.record(message, socket: "ingress")
                    refuse(on: socket, to: request.identity, requestID: request.requestID, .unknownVerb, message)
                }
            }
        }
    }

    /// Why a publish request is refused whole.
    private struct Refusal: Error {
        let code: BusErrorCode
        let message: String
    }

    /// The envelopes of a publish request's batch frame and the request it follows (its
    /// optional second frame), or why it is refused whole: not one or two frames, a second
    /// frame that is not a request id, too many envelopes or bytes, or a batch cut short.
    private func publishEnvelopes(_ request: RequestFrames) -> Result<(EnvelopeBatch, follows: UInt64?), Refusal> {
        if request.argumentBytes > BusLimits.maxRequestBytes {
            return .failure(
                Refusal(
                    code: .tooLarge,
                    message: "a publish request carries at most \(BusLimits.maxRequestBytes) bytes of envelopes, "
                        + "not \(request.argumentBytes): send fewer envelopes per request"))
        }
        guard (1...2).contains(request.frameCount), request.arguments.count == request.frameCount,
            let batch = request.arguments.first
        else {
            return .failure(
                Refusal(
                    code: .malformedRequest,
                    message: "a \(WireProtocol.version) publish request carries one batch frame of envelopes "
                        + "(and, optionally, the id of the request it follows), not \(request.frameCount) frames"))
        }
        var follows: UInt64?
        if request.frameCount == 2 {
            let frame = request.arguments[1]
            guard let id = WireProtocol.parseRequestID(frame) else {
                return .failure(
                    Refusal(
                        code: .malformedRequest,
                        message: "a publish request's second frame is the id of the request it follows: "
                            + "\(WireProtocol.requestIDBytes) bytes, not \(frame.count)"))
            }
            follows = id
        }
        switch WireProtocol.envelopeRanges(inBatch: batch, maxEnvelopes: BusLimits.maxEnvelopesPerPublish) {
        case .success(let envelopes) where envelopes.isEmpty:
            return .failure(Refusal(code: .malformedRequest, message: RequestFrames.noEnvelopes))
        case .success(let envelopes):
            return .success((EnvelopeBatch(bytes: batch, envelopes: envelopes), follows))
        case .failure(let problem):
            switch problem {
            case .tooMany: return .failure(Refusal(code: .tooLarge, message: problem.description))
            case .cutShort, .lengthCutShort:
                return .failure(Refusal(code: .malformedRequest, message: problem.description))
            }
        }
    }

    /// Receives one request, keeping its argument frames only while they fit the request
    /// limits: past them the frames are read and dropped, so an oversized request costs no
    /// more memory than a valid one.
    private func receiveRequest(on socket: ZMQSocket) throws -> Result<RequestFrames, RequestFrames.Problem>? {
        guard let first = try socket.receiveFrame(wait: false) else { return nil }
        var header = [first.bytes]
        var more = first.more
        while more, header.count < 4, let frame = try socket.receiveFrame(limit: 1024) {
            header.append(frame.bytes ?? Data())
            more = frame.more
        }
        var arguments: [Data] = []
        var count = 0
        var bytes = 0
        while more, let frame = try socket.receiveFrame(limit: BusLimits.maxRequestBytes - bytes) {
            count += 1
            bytes += frame.size
            if let kept = frame.bytes, count <= BusLimits.maxEnvelopesPerPublish,
                bytes <= BusLimits.maxRequestBytes
            {
                arguments.append(kept)
            } else {
                arguments = []
            }
            more = frame.more
        }
        return RequestFrames.parse(header, arguments: arguments, frameCount: count, argumentBytes: bytes)
    }

    /// Sequences and appends one batch, and holds what it publishes and answers until the
    /// commit that covers it has finished (``commitWritten()``).
    private func process(_ received: [Request]) throws {
        let arrived = ContinuousClock.now
        let received = inOrder(received)
        // Kept to go back to if the log refuses the batch: the package heads must not name
        // positions that were never written.
        let before = sequencer
        let time = CommitTime.now
        var (requests, batch) = sequenced(received, at: time, before: before)
        // Kept, emptied, for the next batch; a buffer a burst made large is given back
        // (RecordBatch.removeAll), so that an idle daemon holds little.
        defer {
            var records = batch.records
            batch.records = RecordBatch()
            records.removeAll()
            recordBuffer = records
        }
        if batch.records.isEmpty { self.reports = [] }
        var held = WrittenBatch(head: log.head, packageHeads: [:], events: 0, answers: [])
        if !batch.records.isEmpty {
            do {
                try log.append(batch.records)
            } catch let error as EventLogError where error.isRefusal {
                sequencer = before
                refused(batch, of: requests, received: received.count, arrived: arrived, because: error)
                return
            }
            // Any other failure leaves the log refusing everything: the loop stops, without
            // acknowledging, and the daemon's next start recovers from what is durable.
            self.reports = []
            if diskFull {
                diskFull = false
                logger.notice("the log stores publishes again", metadata: ["bus.report": "\(diskFullReport())"])
                refusedWhileFull = 0
            }
            frame(batch, into: &held)
            if BusTracing.isOn { held.spans = Self.commitSpans(of: batch, since: time) }
        }
        count(batch, requests: received.count)
        held.received = arrived
        held.head = log.head
        held.packageHeads = sequencer.packageHeads
        held.events = batch.records.count
        held.answers = acknowledgements(of: requests, batch.results, head: log.head)
        hold(held)
    }

    /// The batch of `received` (after the daemon's own reports, as a request nobody waits for
    /// the answer to) as the sequencer makes it, and the requests it was made of. While the disk
    /// was full, a batch that stores a producer's events also carries the report that the full
    /// disk has passed, so that it is committed exactly when accepting resumes.
    private func sequenced(
        _ received: [Request], at time: CommitTime, before: Sequencer
    ) -> (requests: [Request], batch: Sequencer.Batch) {
        var requests = withReports(self.reports, received)
        let batch = sequencer.sequence(
            requests.map(\.envelopes), log: log, now: (time.seconds, time.nanos), reusing: takeRecordBuffer())
        guard diskFull, batch.records.count > self.reports.count else { return (requests, batch) }
        sequencer = before
        let passed = reporter.event(code: "disk-full", message: diskFullReport())
        requests = withReports(self.reports + [passed], received)
        return (requests, sequencer.sequence(requests.map(\.envelopes), log: log, now: (time.seconds, time.nanos)))
    }

    /// The log refused `batch` (a full disk) and is as it was: every producer is told its
    /// events were not stored, and may retry; the loop goes on.
    private func refused(
        _ batch: Sequencer.Batch, of requests: [Request], received: Int, arrived: ContinuousClock.Instant,
        because error: EventLogError
    ) {
        refusedWhileFull += received
        state.metrics.storeError("refused")
        state.metrics.requests.increment(by: received)
        if !diskFull {
            diskFull = true
            diskFullSince = .now
            logger.error("refusing publishes: the log cannot store them", metadata: ["bus.error": "\(error)"])
        }
        let reason = "not stored: \(error)"
        let head = log.head
        var notStored = 0
        var duplicates = 0
        // A repeat of an id within the batch was answered DUPLICATE of a position that is not
        // written either.
        let results = batch.results.map { list in
            list.map { result -> Bureau_Bus_PublishResult in
                if result.status == .committed || (result.status == .duplicate && result.position > head) {
                    notStored += 1
                    return .rejected(reason)
                }
                if result.status == .duplicate { duplicates += 1 }
                return result
            }
        }
        // Counted as the answers say: not stored, or as the sequencer judged them.
        for code in batch.rejections { state.metrics.rejected(code) }
        state.metrics.rejected(.notStored, count: notStored)
        state.metrics.batchWritten(committed: 0, duplicates: duplicates)
        // Answered after what is written before it is durable: a duplicate's position may be in
        // a batch whose commit is under way.
        hold(
            WrittenBatch(
                head: head, packageHeads: sequencer.packageHeads, events: 0, received: arrived,
                answers: acknowledgements(of: requests, results, head: head, remembering: true)))
    }

    /// The publication messages of `batch`, built now, while the buffer holds the batch, and
    /// sent once it is durable: copied into one buffer, so that the batcher's own stays its own,
    /// to be reused.
    private func frame(_ batch: Sequencer.Batch, into held: inout WrittenBatch) {
        held.frames.reserveCapacity(batch.records.bodies.count + batch.records.count * 32)
        var frames: [UInt8] = []
        var messages: [(topic: Data, frame: Range<Int>)] = []
        swap(&frames, &held.frames)
        let keep: (Data, [UInt8]) -> Void = { topic, frame in
            let start = frames.count
            frames.append(contentsOf: frame)
            messages.append((topic, start..<frames.count))
        }
        batch.records.bodies.withUnsafeBytes { bodies in
            for publication in batch.publications {
                publications.add(
                    type: publication.type, position: publication.position,
                    previousInPackage: publication.previousInPackage,
                    body: UnsafeRawBufferPointer(rebasing: bodies[publication.body]), send: keep)
            }
        }
        publications.flush(send: keep)
        held.frames = frames
        held.messages = messages
    }

    /// The metrics of a batch written: requests, events committed, duplicates and rejections.
    private func count(_ batch: Sequencer.Batch, requests: Int) {
        var duplicates = 0
        for list in batch.results {
            for result in list {
                switch result.status {
                case .rejected: badInput.record(result.reason, socket: "ingress")
                case .duplicate: duplicates += 1
                default: break
                }
            }
        }
        for code in batch.rejections { state.metrics.rejected(code) }
        state.metrics.requests.increment(by: requests)
        state.metrics.batchWritten(committed: batch.records.count, duplicates: duplicates)
    }

    /// The requests that may be appended now (``RecentRequests``); the others are answered
    /// `out-of-order` at once and nothing of them is stored, so that a producer with several
    /// requests in flight never has one stored before the one it sent first (a request lost with
    /// a connection and sent again would otherwise land behind the next).
    private func inOrder(_ requests: [Request]) -> [Request] {
        let admitted = recentRequests.admit(
            requests.map { ($0.isOwn ? nil : WireProtocol.parseRequestID($0.requestID), $0.follows) })
        guard admitted.contains(false) else { return requests }
        var inOrder: [Request] = []
        inOrder.reserveCapacity(requests.count)
        for (request, admitted) in zip(requests, admitted) {
            guard !admitted else {
                inOrder.append(request)
                continue
            }
            refuse(
                on: ingress[request.socket], to: request.identity, requestID: request.requestID,
                .outOfOrder,
                "not stored: the request this one follows has not reached the bus (or was long ago); "
                    + "send it again, following nothing, once the request before it is answered")
        }
        return inOrder
    }

    /// Holds a batch's publications and answers until the commit that covers it has finished.
    private func hold(_ batch: WrittenBatch) {
        heldBytes += batch.bytes
        written.append(batch)
    }

    /// Begins a commit of the batches written, unless one is under way; a log that commits at
    /// once has them published and answered at once.
    private func commitWritten() throws {
        guard committing == nil, !written.isEmpty else { return }
        let batches = written
        written = []
        let signal = commitFinished
        if let commit = try log.beginCommit(whenFinished: { signal.ring() }) {
            committing = (commit, batches)
        } else {
            complete(batches)
        }
    }

    /// Once the sync thread has rung: completes the commit under way (a failed one stops the
    /// loop, nothing of it answered), and publishes and answers its batches.
    private func finishCommit() throws {
        commitFinished.drain()
        guard let (commit, batches) = committing, commit.isFinished else { return }
        committing = nil
        do {
            try log.finishCommit(commit)
        } catch {
            state.metrics.storeError("failed")
            throw error
        }
        if let took = commit.syncDuration { recordSync(took) }
        complete(batches)
    }

    /// One fdatasync's duration, for the metrics and for `stats`' percentiles.
    private func recordSync(_ took: Duration) {
        state.metrics.fdatasync.record(duration: took)
        let microseconds = UInt64(max(0, (took / .microseconds(1)).rounded(.down)))
        state.figures.withLock { $0.syncs.add(microseconds) }
    }

    /// When the loop stops: makes everything written durable, then publishes and answers it.
    private func commitEverything() throws {
        if let (commit, batches) = committing {
            committing = nil
            try log.finishCommit(commit)
            complete(batches)
        }
        guard !written.isEmpty else { return }
        let batches = written
        written = []
        try log.commit()
        complete(batches)
    }

    /// Publishes and answers batches a finished commit made durable, in the order they were written.
    private func complete(_ batches: [WrittenBatch]) {
        // Made once: a closure made per message is an allocation per message.
        let send = Self.publish(on: events)
        var committedEvents = 0
        let now = ContinuousClock.now
        // Kept from commit to commit: an array made per commit is an allocation per commit.
        var latencies = ackLatencies
        latencies.removeAll(keepingCapacity: true)
        defer { ackLatencies = latencies }
        for batch in batches {
            if !batch.answers.isEmpty {
                let latency = now - batch.received
                state.metrics.publishAck.record(duration: latency)
                latencies.append(UInt64(max(0, (latency / .microseconds(1)).rounded(.down))))
            }
            // The head moves before the batch is sent: a subscriber that has a live event and
            // reads the log after it must find the log there, never ahead of what it was sent
            // (it would be told `ahead-of-log`). A read may so give an event a moment before
            // the live stream does; the subscriber then drops the live one as a duplicate.
            publishedHead = max(publishedHead, batch.head)
            state.publishedHead.store(publishedHead, ordering: .releasing)
            batch.frames.withUnsafeBytes { frames in
                for (topic, frame) in batch.messages { send(topic, UnsafeRawBufferPointer(rebasing: frames[frame])) }
            }
            heldBytes -= batch.bytes
            publishedPackageHeads = batch.packageHeads
            committedEvents += batch.events
            // Never waits: a client that misses its ack sends the same request again and is
            // answered from what the log already holds. Counted, not logged: this is the publish path.
            for answer in batch.answers {
                let sent = try? ingress[answer.socket].send(
                    multipart: [answer.identity, version, ackVerb, answer.requestID, answer.body], wait: false)
                if sent != true { state.metrics.repliesUnsent.increment() }
            }
            for span in batch.spans { span.end() }
        }
        if committedEvents > 0 {
            state.committedBatches.add(1, ordering: .relaxed)
            state.committedEvents.add(committedEvents, ordering: .relaxed)
            state.metrics.eventsCommitted.increment(by: committedEvents)
            state.metrics.commits.increment()
            state.metrics.head.record(Int64(clamping: publishedHead))
        }
        if !latencies.isEmpty {
            state.figures.withLock { figures in
                for latency in latencies { figures.acks.add(latency) }
            }
        }
    }

    /// ``recordBuffer``, left empty: handed over whole, so that the batch built in it can grow
    /// it without a copy.
    private func takeRecordBuffer() -> RecordBatch {
        let taken = recordBuffer
        recordBuffer = RecordBatch()
        return taken
    }

    /// Sends one publication message on every PUB socket; a subscriber that does not keep up
    /// loses it (PUB drops past its high-water mark) and fills the gap from the log.
    private static func publish(on sockets: [ZMQSocket]) -> (Data, UnsafeRawBufferPointer) -> Void {
        { type, frame in
            for socket in sockets {
                _ = try? socket.send(type, more: true, wait: false)
                _ = try? socket.send(bytes: frame, wait: false)
            }
        }
    }

    /// Hands memory freed since the last time back to the system (a subscriber that left frees
    /// its queue), at most every few seconds.
    private func trimMemoryIfDue() {
        guard ContinuousClock.now - lastTrim >= .seconds(5) else { return }
        lastTrim = .now
        HeapMemory.releaseFreed()
    }

    /// `received`, after a request of the daemon's own `reports` if there are any.
    private func withReports(_ reports: [OutgoingEvent], _ received: [Request]) -> [Request] {
        // envelopeBytes writes the bytes by hand and does not fail; the throws is its signature's.
        let own = reports.compactMap { try? $0.envelopeBytes(process: reporter.process) }
        return own.isEmpty ? received : [Request.own(own)] + received
    }

    /// What the bus says on the bus once a full disk has passed.
    private func diskFullReport() -> String {
        let seconds = (ContinuousClock.now - diskFullSince).secondsText(decimals: 0)
        return "the log could not store publishes for \(seconds) s (disk full); \(refusedWhileFull) request(s) "
            + "were refused, and it stores them again"
    }

    /// The acknowledgement of each request; `remembering` keeps the answers that a retry must
    /// get again (a refusal that may not hold later).
    private func acknowledgements(
        of requests: [Request], _ results: [[Bureau_Bus_PublishResult]], head: UInt64, remembering: Bool = false
    ) -> [Answer] {
        var acknowledgements: [Answer] = []
        acknowledgements.reserveCapacity(requests.count)
        for (request, list) in zip(requests, results) where !request.isOwn {
            let body = PublishAckEncoding.encode(list, head: head)
            if remembering {
                self.answers.remember(
                    body, to: request.requestID, fingerprint: RequestAnswerCache.fingerprint(of: request.envelopes))
            }
            acknowledgements.append(
                Answer(socket: request.socket, identity: request.identity, requestID: request.requestID, body: body))
        }
        return acknowledgements
    }

    private let version = Data(WireProtocol.version.utf8)
    private let ackVerb = Data(WireProtocol.ack.utf8)

    private func publishHeartbeat() throws {
        var heartbeat = Bureau_Bus_Heartbeat()
        // What is published, not what is written: a subscriber that saw a higher head would
        // fetch positions that the catch-up server does not serve before they are published.
        heartbeat.head = publishedHead
        heartbeat.epochStart = sequencer.epochStart
        heartbeat.epoch = state.epoch
        heartbeat.intervalMs = UInt32(clamping: heartbeatInterval.inMilliseconds)
        heartbeat.packageHeads = publishedPackageHeads.sorted { $0.key < $1.key }.map { package, position in
            var head = Bureau_Bus_PackageHead()
            head.package = package
            head.position = position
            return head
        }
        let body = try heartbeat.serializedData()
        for socket in events {
            _ = try? socket.send(Data(WireProtocol.heartbeatTopic.utf8), more: true, wait: false)
            _ = try? socket.send(body, wait: false)
        }
    }

    /// Answers a request with an `error` reply: `code` (README, "Other requests and errors")
    /// and what the client is told.
    private func refuse(
        on socket: ZMQSocket, to identity: Data, requestID: Data, _ code: BusErrorCode, _ message: String
    ) {
        state.metrics.refused(code: code)
        reply(on: socket, to: identity, verb: WireProtocol.error, requestID: requestID) {
            var error = Bureau_Bus_ErrorReply()
            error.code = code.rawValue
            error.message = message
            return error
        }
    }

    /// Sends a reply; a peer that has gone away or stopped reading is skipped, never waited for.
    private func reply(
        on socket: ZMQSocket, to identity: Data, verb: String, requestID: Data,
        _ message: () throws -> some SwiftProtobuf.Message
    ) {
        // Proto3 messages do not fail to encode; one that did would go unanswered, and counted.
        guard let body = try? message().serializedData() else {
            state.metrics.repliesUnsent.increment()
            return
        }
        let sent = try? socket.send(
            multipart: [identity, Data(WireProtocol.version.utf8), Data(verb.utf8), requestID, body], wait: false)
        if sent != true { state.metrics.repliesUnsent.increment() }
    }
}

extension DaemonState {
    func pong(head: UInt64) -> Bureau_Bus_Pong {
        var pong = Bureau_Bus_Pong()
        pong.head = head
        pong.epoch = epoch
        pong.pid = UInt32(bitPattern: pid)
        pong.version = version
        return pong
    }
}

extension IngressLoop {
    /// Allocations of a megabyte or more (libzmq's frames of large requests) are mapped on their
    /// own and unmapped when freed, whatever came before: glibc otherwise raises that threshold
    /// after each such free, up to 32 MiB, and keeps later frames in its heap, where what a burst
    /// of large requests freed stays resident. Set once per process.
    ///
    /// Fixing that threshold also fixes glibc's trim threshold at 128 KiB, which then gives the
    /// heap's top back to the system (and takes it again) at every batch: it is set to 4 MiB, and
    /// the loop's periodic `malloc_trim` hands back what bursts left. Not more: glibc keeps up to
    /// the trim threshold at the top of every thread's arena even through `malloc_trim` (32 MiB
    /// kept 46 MiB of libzmq's freed queues resident after a subscriber left).
    static let largeAllocationsAreUnmappedWhenFreed: Void = {
        let mmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD, <malloc.h>
        let trimThreshold: Int32 = -1  // M_TRIM_THRESHOLD
        HeapMemory.setOption(mmapThreshold, 1 << 20)
        HeapMemory.setOption(trimThreshold, 4 << 20)
    }()
}
