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
    let ingress: [ZMQSocket]
    let events: [ZMQSocket]
    let log: any EventLog
    var sequencer: Sequencer
    let state: DaemonState
    let stop: WakeSignal
    /// Rung by the memory watch: drop every connection of the ingress and events sockets.
    let renewal: SocketRenewal?
    let heartbeatInterval: Duration
    let durability: Durability
    var logger: Logger
    var badInput: BadInputLog

    /// The most events one wake-up takes in; more waiting requests are taken next time.
    let maxEventsPerBatch = 32_768
    /// The most bytes of envelopes one wake-up takes in, so that what a batch holds (and the
    /// log's write buffer) stays bounded whatever producers send.
    let maxBytesPerBatch = 16 << 20
    /// The most messages one wake-up reads from a socket, whatever they hold, so that a flood
    /// of bad input cannot hold back the batch that valid requests wait in.
    let maxMessagesPerDrain = 4096
    /// Whether the last batch found the disk full, so that it is said once, and its end too.
    var diskFull = false
    /// Since when, and how many requests were refused for it: what the report of its end says.
    var diskFullSince = ContinuousClock.now
    var refusedWhileFull = 0
    /// The daemon's own `ErrorRaised` events (a repaired tail, a full disk that passed), committed
    /// with the next batch, or on their own at the next wake-up.
    var reports: [OutgoingEvent]
    let reporter = ErrorReporter(module: "bus", process: "bus")
    /// Recent refusals for a full disk, so that a retry of a refused request gets the same answer.
    var answers = RequestAnswerCache()
    /// The publish requests admitted lately, for the ones that name a request they follow.
    var recentRequests = RecentRequests()
    /// Builds the publication messages of each committed batch.
    var publications = PublicationBatcher()
    /// When memory freed since was last handed back to the system.
    var lastTrim = ContinuousClock.now
    /// The buffer each batch's records are built in, kept from batch to batch.
    var recordBuffer = RecordBatch()
    /// The publish-to-acknowledgement latencies of one commit's batches, kept from commit to commit.
    var ackLatencies: [UInt64] = []
    /// Rung by the log's sync thread when the commit under way has finished.
    let commitFinished: WakeSignal
    /// The commit under way and the batches it makes durable, in order.
    var committing: (commit: PendingCommit, batches: [WrittenBatch])?
    /// Batches written since it began, for the next commit.
    var written: [WrittenBatch] = []
    /// The bytes ``committing`` and ``written`` hold back (publications, answers).
    var heldBytes = 0
    /// Past this many bytes held back, no request is taken in until the commit under way has
    /// finished, so that a slow disk bounds memory rather than letting it grow (by at most one
    /// wake-up's batch past it).
    let maxHeldBytes = 64 << 20
    /// The last position published, and each package's as of then: what pings and heartbeats say.
    var publishedHead: UInt64
    var publishedPackageHeads: [String: UInt64] = [:]
    /// Live-stream messages a PUB socket refused since one was last sent (``publicationFailed(_:)``).
    var publicationFailures = FailureStreak()

    /// A batch in the log whose commit has not finished yet: what to publish and answer once it has.
    struct WrittenBatch {
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
    struct Answer {
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

    struct Request {
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
    struct Budget {
        var events: Int
        var bytes: Int
        var exhausted: Bool { events <= 0 || bytes <= 0 }
    }

    /// Why a publish request is refused whole.
    struct Refusal: Error {
        let code: BusErrorCode
        let message: String
    }

    /// Sequences and appends one batch, and holds what it publishes and answers until the
    /// commit that covers it has finished (``commitWritten()``).
    func process(_ received: [Request]) throws {
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

    /// Sends one publication message on every PUB socket; a subscriber that does not keep up
    /// loses it (PUB drops past its high-water mark) and fills the gap from the log. A message a
    /// socket refuses goes to ``publicationFailed(_:)``; the sends themselves touch nothing of
    /// the loop's (this is the publish path: one call per event).
    func publisher() -> (Data, UnsafeRawBufferPointer) -> Void {
        let sockets = events
        return { [unowned self] type, frame in
            for socket in sockets {
                do {
                    _ = try socket.send(type, more: true, wait: false)
                    _ = try socket.send(bytes: frame, wait: false)
                } catch {
                    publicationFailed(error)
                }
            }
        }
    }

    /// A PUB socket refused a message: never for a subscriber that is behind (PUB drops for it),
    /// so the socket is closed or its context ended. Counted, and told once per streak at error
    /// level: subscribers then see nothing live and fill every gap from the log.
    func publicationFailed(_ error: any Error) {
        state.metrics.publicationsUnsent.increment()
        guard publicationFailures.failed() else { return }
        logger.error(
            "the live stream could not be sent; subscribers read what they miss from the log",
            metadata: ["bus.error": "\(error)"])
    }

    /// After a round of sends (a commit's publications, a heartbeat) that began with
    /// `failuresBefore` refused in a row: if the round refused none, the streak has ended, and
    /// that is told too.
    func publicationsSent(failuresBefore: Int) {
        guard failuresBefore > 0, publicationFailures.count == failuresBefore else { return }
        let failures = publicationFailures.succeeded()
        logger.notice("the live stream is sent again", metadata: ["bus.unsent": "\(failures)"])
    }

    let version = Data(WireProtocol.version.utf8)
    let ackVerb = Data(WireProtocol.ack.utf8)

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
