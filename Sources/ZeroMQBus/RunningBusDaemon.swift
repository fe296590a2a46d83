import BureauSchemas
import Bus
import EventLog
import Guards
import Logging
import ServiceLifecycle
import ZeroMQ

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// A started bus daemon: its threads, sockets and log.
public final class RunningBusDaemon: Sendable {
    public let info: BusInfo
    /// What opening the file log found and repaired; nil for a log elsewhere (a PostgreSQL store).
    public let recovery: RecoveryReport?
    private let state: DaemonState
    private let stopSignal: WakeSignal
    private let threads: [OwnThread]
    private let zap: ZAPHandler?
    private let context: ZMQContext
    private let infoFile: String
    private let logger: Logger

    init(
        configuration: BusDaemon.Configuration, log: any EventLog, recovery: RecoveryReport?, metrics: BusMetrics,
        logger: Logger
    ) throws {
        self.logger = logger
        self.recovery = recovery
        let stopSignal = try WakeSignal()
        self.stopSignal = stopSignal
        let commitFinished = try WakeSignal()
        let renewIngress = try WakeSignal()
        let renewReads = try WakeSignal()
        let context = try ZMQContext(ioThreads: 1)
        self.context = context
        let zap = try Self.startZAP(context: context, configuration: configuration, logger: logger)
        self.zap = zap
        let sockets: DaemonSockets
        do {
            sockets = try DaemonSockets(context: context, configuration: configuration)
        } catch {
            zap?.stop()
            throw error
        }
        // 53 bits, so that a language whose numbers are doubles (JavaScript, JSON readers) reads it exactly.
        let epoch = UInt64.random(in: 1...(1 << 53 - 1))
        let state = DaemonState(
            head: log.head, epoch: epoch, pid: getpid(), version: BusDaemon.version, metrics: metrics)
        metrics.head.record(Int64(clamping: log.head))
        self.state = state
        let memoryWatch = configuration.maxMemoryBytes.map {
            MemoryWatch(
                limit: $0, renewals: [renewIngress, renewReads], stop: stopSignal, metrics: metrics, logger: logger)
        }

        info = BusInfo(
            pid: getpid(), epoch: epoch, startedAt: Date().formatted(.iso8601), version: BusDaemon.version,
            endpoints: configuration.location.ipcEndpoints, tcpEndpoints: sockets.tcpEndpoints)
        infoFile = configuration.location.infoFile
        let reader: any EventLogReader
        do {
            try RunningBusDaemon.write(info, to: infoFile)
            reader = try log.makeReader()
        } catch {
            // Nothing runs yet: what is bound and started so far goes with the failure.
            sockets.closeAll()
            zap?.stop()
            throw error
        }

        let lastCommitTime = Self.lastCommitTime(of: log, logger: logger)
        let sequencer = Sequencer(
            maxEnvelopeBytes: configuration.maxEnvelopeBytes, epochStart: log.head, lastCommitTime: lastCommitTime)
        let catchUp = UncheckedBox(
            CatchUpServer(
                sockets: sockets.read, reader: reader, state: state, stop: stopSignal,
                renewal: memoryWatch.map { _ in sockets.readRenewal(renewReads) },
                logDirectory: configuration.store == nil ? configuration.location.logDirectory : nil, logger: logger))
        let ingress = UncheckedBox(
            IngressLoop(
                ingress: sockets.ingress, events: sockets.events, log: log, sequencer: sequencer, state: state,
                stop: stopSignal, commitFinished: commitFinished,
                renewal: memoryWatch.map { _ in sockets.ingressRenewal(renewIngress) },
                configuration: configuration,
                reports: Self.reports(of: recovery), logger: logger))
        do {
            threads = try Self.startThreads(
                ingress: ingress, catchUp: catchUp, memoryWatch: memoryWatch, log: log, stop: stopSignal, state: state,
                logger: logger)
        } catch {
            sockets.closeAll()
            zap?.stop()
            throw error
        }
        logger.info(
            "the bus is up",
            metadata: [
                "bus.data": "\(configuration.location.dataDirectory)", "bus.head": "\(log.head)",
                "bus.store": "\(configuration.store?.name ?? "files")",
                "bus.durability": "\(configuration.durability)", "bus.pid": "\(getpid())",
                "bus.ingress": "\(info.endpoints.ingress)",
            ])
        if let recovery, recovery.truncatedSegment != nil {
            logger.warning("the log's tail was repaired", metadata: ["log.recovery": "\(recovery)"])
        }
    }

    /// The ZAP handler that admits CURVE clients by key, started, when the TCP endpoint is secured.
    private static func startZAP(
        context: ZMQContext, configuration: BusDaemon.Configuration, logger: Logger
    ) throws -> ZAPHandler? {
        guard case .curve(_, let allowed)? = configuration.tcp?.security else { return nil }
        let handler = try ZAPHandler(
            context: context, allowedKeys: allowed,
            onDecision: { decision in
                if !decision.allowed {
                    logger.warning(
                        "refused a TCP client",
                        metadata: [
                            "bus.address": "\(decision.address)", "bus.key": "\(decision.clientKey ?? "none")",
                        ])
                }
            },
            onFailure: { failure in
                logger.error("\(failure)", metadata: ["error.description": "\(failure.error)"])
            })
        try handler.start()
        return handler
    }

    /// The commit time of the log's last record, which the sequencer's commit times follow.
    private static func lastCommitTime(of log: any EventLog, logger: Logger) -> (seconds: Int64, nanos: Int32) {
        do {
            return try RunningBusDaemon.commitTime(of: log.lastRecord)
        } catch {
            // The log's records checked out (their checksums), so this is not expected; the clock
            // alone then orders commit times, which may go back across this restart.
            logger.error(
                "the log's last record cannot be read for its commit time; commit times may go back",
                metadata: ["bus.position": "\(log.lastRecord?.position ?? 0)", "bus.error": "\(error)"])
            return (0, 0)
        }
    }

    /// Starts the daemon's threads: the ingress (which closes the log when it stops, then
    /// stops the others), the catch-up reads, and the memory watch if any. If one cannot be
    /// started, those that were are stopped before the error is thrown.
    private static func startThreads(
        ingress: UncheckedBox<IngressLoop>, catchUp: UncheckedBox<CatchUpServer>, memoryWatch: MemoryWatch?,
        log: any EventLog, stop: WakeSignal, state: DaemonState, logger: Logger
    ) throws -> [OwnThread] {
        let logBox = UncheckedBox(log)
        var started: [OwnThread] = []
        do {
            started.append(
                try OwnThread(name: "bureau-ingress") {
                    var failure: (any Error)?
                    do {
                        try ingress.value.run()
                    } catch {
                        failure = error
                        logger.critical("the bus stops", metadata: ["bus.error": "\(error)"])
                    }
                    do {
                        try logBox.value.close()
                    } catch {
                        failure = failure ?? error
                        logger.critical("could not close the log", metadata: ["bus.error": "\(error)"])
                    }
                    // The catch-up thread stops with the sequencer.
                    stop.ring()
                    state.finish(error: failure)
                })
            started.append(try OwnThread(name: "bureau-catchup") { catchUp.value.run() })
            if let memoryWatch { started.append(try OwnThread(name: "bureau-memory") { memoryWatch.run() }) }
            return started
        } catch {
            stop.ring()
            for thread in started { thread.join() }
            throw error
        }
    }

    /// The last position published to subscribers.
    public var head: UInt64 { state.publishedHead.load(ordering: .acquiring) }

    /// How many commits the daemon has made (with `always`, one fdatasync each, covering every
    /// batch written while the one before ran), and how many events they held.
    public var committed: (batches: Int, events: Int) {
        (state.committedBatches.load(ordering: .relaxed), state.committedEvents.load(ordering: .relaxed))
    }

    /// Asks the loops to stop; returns at once.
    public func requestStop() {
        stopSignal.ring()
    }

    /// Stops the loops, makes the log durable and releases it; returns when all is done.
    public func stop() {
        stopSignal.ring()
        for thread in threads { thread.join() }
        zap?.stop()
        // Leave bus.json to a daemon that has since taken over, if any.
        if let data = FileManager.default.contents(atPath: infoFile),
            let current = try? JSONDecoder().decode(BusInfo.self, from: data), current.epoch == info.epoch
        {
            unlink(infoFile)
        }
        logger.info("the bus stopped", metadata: ["bus.head": "\(head)"])
    }

    /// Returns when the daemon has stopped; throws what stopped it, if it failed.
    public func waitUntilStopped() async throws {
        try await state.waitUntilFinished()
    }

    /// Writes bus.json: a new file renamed over the old one, so that a reader sees one or the
    /// other whole. On a full disk, where no new file can be made, it writes over the old one
    /// in place, within the space it already has (padded with spaces, which JSON allows), so
    /// that a daemon killed on a full disk starts again; throws, saying why, if it cannot.
    static func write(_ info: BusInfo, to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(info)
        let temporary = path + ".new"
        let written = writeNew(temporary, data)
        if written == 0 {
            guard rename(temporary, path) == 0 else {
                throw BusError.unusableLocation("cannot write \(path): \(String(cString: strerror(errno)))")
            }
            return
        }
        unlink(temporary)
        guard written == ENOSPC || written == EDQUOT else {
            throw BusError.unusableLocation("cannot write \(temporary): \(String(cString: strerror(written)))")
        }
        try overwrite(path, with: data)
    }

    /// Creates `path` with `data`, synced; returns 0, or the errno that stopped it.
    private static func writeNew(_ path: String, _ data: Data) -> Int32 {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return errno }
        defer { close(descriptor) }
        let result = data.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        if result < 0 { return errno }
        return result == data.count ? 0 : ENOSPC
    }

    /// Writes `data` over the existing `path` in place, padded with spaces to the file's size;
    /// only where that takes no more space than the file has.
    private static func overwrite(_ path: String, with data: Data) throws {
        let descriptor = open(path, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw BusError.unusableLocation(
                "cannot write \(path): the disk is full, and there is no \(path) from before to write over; "
                    + "free some space on it")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw BusError.unusableLocation("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        let allocated = Int(status.st_blocks) * 512
        guard data.count <= max(Int(status.st_size), allocated) else {
            throw BusError.unusableLocation(
                "cannot write \(path): the disk is full, and the \(data.count) bytes do not fit in the "
                    + "\(allocated) the file has; free some space on it")
        }
        var padded = data
        if padded.count < Int(status.st_size) {
            padded.append(Data(repeating: UInt8(ascii: " "), count: Int(status.st_size) - padded.count))
        }
        let result = padded.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        guard result == padded.count else {
            throw BusError.unusableLocation(
                "cannot write \(path) in place on a full disk: \(String(cString: strerror(result < 0 ? errno : ENOSPC)))"
            )
        }
    }

    /// What the daemon reports on the bus about opening the log: a cut tail (a write that was
    /// never acknowledged) is worth an `ErrorRaised` that `bureau show errors` lists.
    static func reports(of recovery: RecoveryReport?) -> [OutgoingEvent] {
        guard let recovery, recovery.truncatedSegment != nil else { return [] }
        return [ErrorReporter(module: "bus", process: "bus").event(code: .logRecovered, message: "\(recovery)")]
    }

    /// The commit time of the last record, so that commit times never go back across restarts;
    /// zero for an empty log.
    static func commitTime(of record: LogRecord?) throws -> (seconds: Int64, nanos: Int32) {
        guard let record else { return (0, 0) }
        let envelope = try Bureau_Envelope(serializedBytes: record.body)
        return (envelope.commitTime.seconds, envelope.commitTime.nanos)
    }
}
