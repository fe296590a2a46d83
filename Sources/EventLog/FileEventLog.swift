import Guards
import Logging

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The event log on disk: a directory of segment files written by one process.
///
/// Opening the log takes the directory's lock and checks its newest segment whole (not the
/// older ones, so opening takes the same time whatever the log's size). A bad record beyond
/// the recovery point that looks like a torn write is cut; any other bad record is damage,
/// and opening refuses with ``EventLogError/damaged(_:)`` rather than lose an acknowledged
/// event (see ``RecoveryPoint``).
///
/// Appends are all or nothing: a batch is written into one segment (a segment rolls between
/// batches), and a write that fails is undone before the error is thrown. A full disk is a
/// refusal (``EventLogError/diskFull(path:)``) and the log goes on; any other failure, and
/// above all a failed `fdatasync`, leaves the log refusing everything
/// (``EventLogError/failed(_:)``) until it is reopened, which recovers from what is durable.
///
/// Use it from one thread; readers on other threads use ``makeReader()`` or ``LogCursor``.
public final class FileEventLog: EventLog {
    public struct Options: Sendable {
        public var durability: Durability = .always
        /// A new segment starts before a batch that would grow the current one past this many
        /// bytes (a batch is never split, so one larger than this makes a larger segment).
        public var segmentSize: Int64 = 64 << 20
        /// A sparse index entry is written every this many bytes of a segment.
        public var indexInterval: Int64 = 64 << 10
        /// How many recent ids are remembered to recognise retried appends.
        public var deduplicationWindow: Int = 100_000
        /// Every file system call goes through it: tests inject faults here.
        public var fileSystem: any FileSystem = PosixFileSystem()

        public init() {}
    }

    public let directory: String
    public let options: Options
    /// What opening the log found and repaired.
    public let recovery: RecoveryReport
    public private(set) var head: UInt64
    public private(set) var lastRecord: LogRecord?

    private let fileSystem: any FileSystem
    private let lock: DirectoryLock
    private let recoveryPoint: RecoveryPointFile
    private var segment: SegmentFile
    private var file: PosixFile
    /// Where the current segment's records start: 40 bytes in, or 32 in a segment of the first
    /// layout that an old build wrote and this one appends to.
    private var headerSize: Int64
    private var size: Int64
    /// nil once an index write failed in this segment: the index then stays a valid prefix.
    private var index: PosixFile?
    private var indexSize: Int64
    private var lastIndexedOffset: Int64
    private var window: DeduplicationWindow
    private var unsynced = false
    private var lastSync = ContinuousClock.now
    /// The commit ``beginCommit(whenFinished:)`` started, until it is waited for.
    private var underWay: PendingCommit?
    /// Runs the fdatasyncs of ``beginCommit(whenFinished:)``; started by the first.
    private let syncThread = SyncThread()
    /// The highest position the recovery point has said was acknowledged: it never goes back.
    private var acknowledged: UInt64 = 0
    /// Where the acknowledged records end in the current segment (its header's end if none
    /// is in it): a failed fdatasync cuts the segment back to here.
    private var acknowledgedEnd: Int64
    private var writeBuffer: [UInt8] = []
    private var indexBuffer: [UInt8] = []
    private var recordSizes: [Int] = []
    /// Set when the state on disk is unknown: everything is refused with it.
    private var failure: EventLogError?
    private let logger: Logger

    /// Opens (creating if needed) the log in `directory`, recovering its tail.
    public init(directory: String, options: Options = Options(), logger: Logger) throws {
        self.directory = directory
        self.options = options
        self.logger = logger
        fileSystem = options.fileSystem
        do {
            try OwnerOnly.makeDirectory(directory, fileSystem: fileSystem)
        } catch {
            throw EventLogError.io(operation: error.operation, path: error.path, errno: error.code)
        }
        lock = try DirectoryLock(directory: directory, fileSystem: fileSystem)
        let opened: Opened
        do {
            opened = try FileEventLog.open(directory: directory, options: options)
        } catch {
            lock.release()
            throw error
        }
        recovery = opened.report
        recoveryPoint = opened.recoveryPoint
        segment = opened.segment
        file = opened.file
        headerSize = opened.headerSize
        index = opened.index
        head = opened.report.head
        acknowledged = head
        lastRecord = opened.lastRecord
        size = opened.size
        acknowledgedEnd = opened.size
        indexSize = opened.indexSize
        lastIndexedOffset = opened.lastIndexedOffset
        do {
            window = try FileEventLog.loadWindow(
                capacity: options.deduplicationWindow, head: head, newest: opened.segment, directory: directory,
                fileSystem: fileSystem)
        } catch {
            opened.file.close()
            opened.index?.close()
            opened.recoveryPoint.close()
            lock.release()
            throw error
        }
        if recovery.truncatedSegment != nil || recovery.listedDirectory || recovery.rebuiltIndex
            || recovery.indexProblem != nil
        {
            logger.warning("recovered the event log", metadata: ["log.recovery": "\(recovery)"])
        } else {
            logger.info(
                "opened the event log", metadata: ["log.head": "\(head)", "log.newest_segment": "\(segment.name)"])
        }
    }

    deinit {
        syncThread.stop()
    }

    public func position(of id: EventID) -> UInt64? {
        window.position(of: id)
    }

    public func positions(of ids: [EventID]) -> [UInt64?] {
        window.positions(of: ids)
    }

    public func claimPositions(_ ids: [EventID], from first: UInt64) -> [UInt64?] {
        window.claim(ids, from: first)
    }

    public func append(_ records: [LogRecord]) throws {
        try forgettingClaimsOnFailure {
            if let failure { throw failure }
            guard let last = records.last else { return window.cancelClaims() }
            try writeFramed { buffer, sizes in
                var expected = head + 1
                for record in records {
                    try record.body.withUnsafeBytes { body in
                        try Self.frame(
                            position: record.position, id: record.id, body: body, expected: &expected,
                            into: &buffer, sizes: &sizes)
                    }
                }
            }
            window.insert(records)
            lastRecord = last
        }
    }

    /// Appends a batch's records, framed straight from its buffer of bodies.
    public func append(_ batch: RecordBatch) throws {
        try forgettingClaimsOnFailure {
            if let failure { throw failure }
            guard let last = batch.entries.last else { return window.cancelClaims() }
            try batch.bodies.withUnsafeBytes { bodies in
                try writeFramed { buffer, sizes in
                    var expected = head + 1
                    for entry in batch.entries {
                        try Self.frame(
                            position: entry.position, id: entry.id,
                            body: UnsafeRawBufferPointer(rebasing: bodies[entry.body]),
                            expected: &expected, into: &buffer, sizes: &sizes)
                    }
                }
                window.insert(batch.entries)
                lastRecord = LogRecord(
                    position: last.position, id: last.id,
                    body: Data(UnsafeRawBufferPointer(rebasing: bodies[last.body])))
            }
        }
    }

    /// Runs an append; if it throws, the positions claimed for it are forgotten, since nothing
    /// of it is in the log (a retry of its events must not look like a duplicate).
    private func forgettingClaimsOnFailure(_ append: () throws -> Void) throws {
        do {
            try append()
        } catch {
            window.cancelClaims()
            throw error
        }
    }

    /// Checks that a record is the next one, `expected`, and fits; frames it into `buffer`
    /// and its size into `sizes`.
    private static func frame(
        position: UInt64, id: EventID, body: UnsafeRawBufferPointer, expected: inout UInt64,
        into buffer: inout [UInt8], sizes: inout [Int]
    ) throws {
        guard position == expected else {
            throw EventLogError.positionOutOfOrder(expected: expected, got: position)
        }
        guard body.count <= RecordFormat.maxBodySize else {
            throw EventLogError.recordTooLarge(bytes: body.count, limit: RecordFormat.maxBodySize)
        }
        RecordFormat.append(position: position, id: id, body: body, to: &buffer)
        sizes.append(RecordFormat.size(ofBody: body.count))
        expected += 1
    }

    /// Frames records with `frame` (each checked, its bytes appended to the buffer and its size
    /// to the sizes), then writes them as one batch into one segment, rolling first if they
    /// would overfill it. Afterwards the log's head is the last record's; the caller adds the
    /// ids to the window.
    private func writeFramed(_ frame: (inout [UInt8], inout [Int]) throws -> Void) throws {
        // The buffers are taken out of the object for the loops, so that each record costs no
        // exclusivity check on a property, and put back (with their capacity) at the end.
        var buffer: [UInt8] = []
        var sizes: [Int] = []
        var entries: [UInt8] = []
        swap(&buffer, &writeBuffer)
        swap(&sizes, &recordSizes)
        swap(&entries, &indexBuffer)
        defer {
            swap(&buffer, &writeBuffer)
            swap(&sizes, &recordSizes)
            swap(&entries, &indexBuffer)
        }
        buffer.removeAll(keepingCapacity: true)
        sizes.removeAll(keepingCapacity: true)
        entries.removeAll(keepingCapacity: true)
        // Checked and framed first: the bytes do not depend on where they go.
        try frame(&buffer, &sizes)
        let first = head + 1
        if size > headerSize && size + Int64(buffer.count) > options.segmentSize {
            try roll(startingAt: first)
        }
        var offset = size
        var lastIndexed = lastIndexedOffset
        if index != nil {
            let interval = options.indexInterval
            for (number, recordSize) in sizes.enumerated() {
                if offset - lastIndexed >= interval {
                    SparseIndex.encode(.init(position: first + UInt64(number), offset: offset), into: &entries)
                    lastIndexed = offset
                }
                offset += Int64(recordSize)
            }
        } else {
            offset += Int64(buffer.count)
        }
        do {
            try buffer.withUnsafeBytes { try file.write($0, at: size) }
        } catch {
            try undoWrite(after: error)
        }
        writeIndex(entries, lastIndexed: lastIndexed)
        size = offset
        head += UInt64(sizes.count)
        unsynced = true
    }

    /// Makes the appended records durable as the policy says, then records them as
    /// acknowledged in the recovery point: call it before acknowledging them.
    public func commit() throws {
        if let failure { throw failure }
        switch options.durability {
        case .always: try sync()
        case .interval: try syncIfDue()
        case .never: break
        }
        try recordAcknowledged(through: head, end: size)
    }

    /// With `always`, the fdatasync runs on the log's sync thread, and the caller may frame and
    /// write the next batch meanwhile (``EventLog/beginCommit(whenFinished:)``); with the other
    /// policies it is ``commit()``.
    public func beginCommit(whenFinished finished: @escaping @Sendable () -> Void) throws -> PendingCommit? {
        if let failure { throw failure }
        try awaitCommitUnderWay()
        guard case .always = options.durability, unsynced else {
            try commit()
            return nil
        }
        let pending = PendingCommit(head: head, end: size)
        // The sync thread only calls fdatasync on it, and the writer neither closes nor replaces
        // it before that has finished (it waits first).
        let file = UncheckedBox(file)
        underWay = pending
        // Anything written from now on needs the next fdatasync.
        unsynced = false
        syncThread.submit {
            do {
                let start = ContinuousClock.now
                try file.value.dataSync()
                pending.finish(.success(()), took: .now - start)
            } catch let error as EventLogError {
                pending.finish(.failure(error))
            } catch {
                pending.finish(.failure(.failed("\(error)")))
            }
            finished()
        }
        return pending
    }

    public func finishCommit(_ commit: PendingCommit) throws {
        // Waited for here, or earlier (by a roll, a sync, the next beginCommit), where a failed
        // one failed the log.
        if underWay === commit { try awaitCommitUnderWay() }
        if let failure { throw failure }
        try recordAcknowledged(through: commit.head, end: commit.end)
    }

    /// Waits for the commit under way, if any. A failed fdatasync fails the log: it is never
    /// retried, since a second one may report success for data lost.
    private func awaitCommitUnderWay() throws {
        guard let commit = underWay else { return }
        underWay = nil
        switch commit.wait() {
        case .success:
            lastSync = .now
        case .failure(let error):
            throw failSync("\(error)")
        }
    }

    /// Fails the log after a failed fdatasync, and cuts the records it does not know to be
    /// durable. Those are in the page cache, maybe only there: left, this process's readers
    /// and the next opening would take them for stored ones, and a retry would be answered
    /// DUPLICATE of an event the disk may never get (PostgreSQL's "fsyncgate"). None was
    /// acknowledged, so cutting them loses nothing; a retry stores them again. No fdatasync
    /// follows the cut (none may follow a failed one): the page cache has it at once, which is
    /// what every read sees, and if a power cut loses it the records are unacknowledged ones
    /// beyond the recovery point, which opening checks as it always does.
    private func failSync(_ reason: String) -> EventLogError {
        let failure = fail("\(reason); it is not retried, since a second fdatasync may report success for data lost")
        guard size > acknowledgedEnd else { return failure }
        do {
            try file.truncate(to: acknowledgedEnd)
            logger.warning(
                "cut the records written since the last acknowledged one, as their fdatasync failed",
                metadata: [
                    "log.segment": "\(segment.name)", "log.acknowledged": "\(acknowledged)",
                    "log.cut_bytes": "\(size - acknowledgedEnd)",
                ])
            size = acknowledgedEnd
        } catch {
            logger.critical(
                "could not cut the records whose fdatasync failed; until the machine restarts, the page cache may show them as stored",
                metadata: ["log.segment": "\(segment.name)", "log.error": "\(error)"])
        }
        return failure
    }

    /// Records positions through `position`, which end at `end` in the current segment, as
    /// acknowledged in the recovery point (never fewer than it said before).
    private func recordAcknowledged(through position: UInt64, end: Int64) throws {
        if position > acknowledged {
            acknowledged = position
            // A commit begun before a roll ends in the old segment, but covers nothing past
            // what the roll acknowledged: it never gets here.
            acknowledgedEnd = end
        }
        do {
            try recoveryPoint.record(RecoveryPoint(acknowledged: acknowledged, segment: segment.firstPosition))
        } catch {
            throw fail("could not record the recovery point: \(error)")
        }
    }

    public func syncIfDue() throws {
        if let failure { throw failure }
        guard unsynced, case .interval(let milliseconds) = options.durability else { return }
        if ContinuousClock.now - lastSync >= .milliseconds(milliseconds) {
            try sync()
        }
    }

    /// fdatasyncs the current segment now, whatever the policy. A failure is never retried:
    /// the log refuses everything after it.
    public func sync() throws {
        if let failure { throw failure }
        try awaitCommitUnderWay()
        guard unsynced else { return }
        do {
            try file.dataSync()
        } catch {
            throw failSync("\(error)")
        }
        unsynced = false
        lastSync = .now
    }

    public func close() throws {
        defer {
            // Not closed under an fdatasync still running.
            _ = underWay?.wait()
            syncThread.stop()
            file.close()
            index?.close()
            recoveryPoint.close()
            lock.release()
        }
        // A log whose state on disk is unknown is left as it is, for the next opening to recover.
        guard failure == nil else { return }
        try sync()
        do {
            acknowledged = head
            try recoveryPoint.recordDurably(RecoveryPoint(acknowledged: head, segment: segment.firstPosition))
        } catch {
            throw fail("could not record the recovery point: \(error)")
        }
    }

    public func makeReader() throws -> any EventLogReader {
        FileLogReader(directory: directory, fileSystem: fileSystem)
    }

    // MARK: Failures

    /// Puts the log in the failed state and returns the error it now throws.
    private func fail(_ reason: String) -> EventLogError {
        let error = EventLogError.failed(reason)
        failure = error
        logger.critical("the event log stopped", metadata: ["log.error": "\(reason)"])
        return error
    }

    /// Undoes a data write that failed part way: cuts the segment back to where the batch
    /// began, durably, so that nothing of it can come back. Throws what the caller is told.
    private func undoWrite(after error: any Error) throws -> Never {
        // The fdatasync under way first: after a failed one, none may follow (nor is the log's
        // state on disk known).
        try awaitCommitUnderWay()
        do {
            try file.truncate(to: size)
        } catch let undo {
            throw fail("\(error), and undoing the partial write failed too: \(undo)")
        }
        do {
            try file.dataSync()
        } catch let undo {
            throw failSync("\(error), and the fdatasync after undoing the partial write failed: \(undo)")
        }
        if case .io(_, let path, let code) = error as? EventLogError, SystemError(code).isNoSpace {
            throw EventLogError.diskFull(path: path)
        }
        throw fail("\(error) (the partial write was undone)")
    }

    /// Writes the batch's index entries; the index is a hint, so a failure only stops indexing
    /// this segment (after cutting the index back to its entries, if it can).
    private func writeIndex(_ entries: [UInt8], lastIndexed: Int64) {
        guard !entries.isEmpty, let index else { return }
        do {
            try entries.withUnsafeBytes { try index.write($0, at: indexSize) }
            indexSize += Int64(entries.count)
            lastIndexedOffset = lastIndexed
        } catch {
            var problem = "\(index.path) could not be written (\(error))"
            do {
                try index.truncate(to: indexSize)
            } catch let cut {
                // A partial entry may remain at the end: readers check every entry they use.
                problem += ", nor cut back to its entries (\(cut))"
            }
            // Said once, in the words the log's opening uses for an index it cannot rebuild.
            logger.warning(
                "stopped indexing a segment",
                metadata: ["log.index": "\(index.path)", "log.problem": "\(problem); readers scan the segment instead"])
            index.close()
            self.index = nil
        }
    }

    // MARK: Rolling

    /// Finishes the current segment and starts one whose first record is `position`.
    private func roll(startingAt position: UInt64) throws {
        // Every segment but the newest is whole and durable.
        if options.durability != .never { try sync() }
        let next = SegmentFile(directory: directory, firstPosition: position)
        do {
            try FileEventLog.create(next, previous: segment.firstPosition, fileSystem: fileSystem)
        } catch EventLogError.diskFull(let path) {
            throw EventLogError.diskFull(path: path)
        } catch {
            throw fail("could not start segment \(next.name): \(error)")
        }
        let newFile: PosixFile
        let newIndex: PosixFile
        do {
            newFile = try PosixFile(path: next.path, flags: O_RDWR, fileSystem: fileSystem)
            newIndex = try PosixFile(path: next.indexPath, flags: O_RDWR | O_CREAT | O_TRUNC, fileSystem: fileSystem)
            // The recovery point names the newest segment, so opening finds it without a listing.
            acknowledged = head
            try recoveryPoint.recordDurably(RecoveryPoint(acknowledged: head, segment: next.firstPosition))
        } catch {
            throw fail("could not switch to segment \(next.name): \(error)")
        }
        file.close()
        index?.close()
        segment = next
        file = newFile
        index = newIndex
        headerSize = Int64(SegmentFile.headerSize)
        size = headerSize
        acknowledgedEnd = size
        indexSize = 0
        lastIndexedOffset = size
        logger.debug("started a new segment", metadata: ["log.segment": "\(next.name)"])
    }

    /// Creates a segment with its header, durably: written aside and renamed, so a crash leaves
    /// it whole or absent. A failure leaves no segment behind; a full disk is ``EventLogError/diskFull(path:)``.
    static func create(_ segment: SegmentFile, previous: UInt64, fileSystem: any FileSystem) throws {
        let header = SegmentFile.header(firstPosition: segment.firstPosition, previousFirstPosition: previous)
        do {
            try header.withUnsafeBytes { try PosixFile.replace(segment.path, with: $0, fileSystem: fileSystem) }
        } catch {
            // Renamed but not made durable: take it away again, or nothing is sure of the directory.
            if fileSystem.exists(segment.path) {
                do {
                    try fileSystem.remove(segment.path)
                } catch let removal {
                    throw EventLogError.failed("could not remove the half-created \(segment.path): \(removal)")
                }
            }
            if case .io(_, _, let code) = error as? EventLogError, SystemError(code).isNoSpace {
                throw EventLogError.diskFull(path: segment.path)
            }
            throw error
        }
    }
}
