import BureauSchemas
import Bus
import EventLog
import Guards
import Logging

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Sequencing, writing and committing: each batch sequenced and framed into the log, held
/// until the commit that covers it has finished, then published and answered in order.
extension IngressLoop {
    /// The batch of `received` (after the daemon's own reports, as a request nobody waits for
    /// the answer to) as the sequencer makes it, and the requests it was made of. While the disk
    /// was full, a batch that stores a producer's events also carries the report that the full
    /// disk has passed, so that it is committed exactly when accepting resumes.
    func sequenced(
        _ received: [Request], at time: CommitTime, before: Sequencer
    ) -> (requests: [Request], batch: Sequencer.Batch) {
        var requests = withReports(self.reports, received)
        let batch = sequencer.sequence(
            requests.map(\.envelopes), log: log, now: (time.seconds, time.nanos), reusing: takeRecordBuffer())
        guard diskFull, batch.records.count > self.reports.count else { return (requests, batch) }
        sequencer = before
        let passed = reporter.event(code: .diskFull, message: diskFullReport())
        requests = withReports(self.reports + [passed], received)
        return (requests, sequencer.sequence(requests.map(\.envelopes), log: log, now: (time.seconds, time.nanos)))
    }

    /// The log refused `batch` (a full disk) and is as it was: every producer is told its
    /// events were not stored, and may retry; the loop goes on.
    func refused(
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
    func frame(_ batch: Sequencer.Batch, into held: inout WrittenBatch) {
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
    func count(_ batch: Sequencer.Batch, requests: Int) {
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

    /// Holds a batch's publications and answers until the commit that covers it has finished.
    func hold(_ batch: WrittenBatch) {
        heldBytes += batch.bytes
        written.append(batch)
    }

    /// Begins a commit of the batches written, unless one is under way; a log that commits at
    /// once has them published and answered at once.
    func commitWritten() throws {
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
    func finishCommit() throws {
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
    func recordSync(_ took: Duration) {
        state.metrics.fdatasync.record(duration: took)
        let microseconds = UInt64(max(0, took.inMicroseconds))
        state.figures.withLock { $0.syncs.add(microseconds) }
    }

    /// When the loop stops: makes everything written durable, then publishes and answers it.
    func commitEverything() throws {
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
    func complete(_ batches: [WrittenBatch]) {
        // Made once: a closure made per message is an allocation per message.
        let send = publisher()
        let failuresBefore = publicationFailures.count
        var publications = 0
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
                latencies.append(UInt64(max(0, latency.inMicroseconds)))
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
            publications += batch.messages.count
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
        if publications > 0 { publicationsSent(failuresBefore: failuresBefore) }
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
    func takeRecordBuffer() -> RecordBatch {
        let taken = recordBuffer
        recordBuffer = RecordBatch()
        return taken
    }
}
