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

/// Opening a log: recovery from what is durable, apart from the writer. It finds the newest
/// segment, checks it whole against the recovery point, cuts only a torn unacknowledged tail
/// and refuses any other damage (``EventLogError/damaged(_:)``), naming what a repair would
/// keep and lose.
extension FileEventLog {
    struct Opened {
        var report: RecoveryReport
        var recoveryPoint: RecoveryPointFile
        var segment: SegmentFile
        var file: PosixFile
        /// Where the newest segment's records start: its header's size, which is smaller in a
        /// segment of the first layout (``SegmentFile``).
        var headerSize: Int64
        var index: PosixFile?
        var lastRecord: LogRecord?
        var size: Int64
        var indexSize: Int64
        var lastIndexedOffset: Int64
    }

    /// Finds the newest segment, checks it whole, cuts a torn unacknowledged tail, refuses
    /// damage, rebuilds its index if it does not match, and records the recovery point.
    static func open(directory: String, options: Options) throws -> Opened {
        let fileSystem = options.fileSystem
        let start = try startingSegment(in: directory, fileSystem: fileSystem)
        let newest = try scanToNewest(from: start.segment, in: directory, options: options)
        var report = RecoveryReport(
            head: newest.scan.head, newestSegment: newest.segment.name, scannedBytes: newest.scanned)
        report.acknowledged = start.acknowledged
        report.listedDirectory = start.listed
        report.recoveryPointProblem = start.problem
        try cutTornTail(
            of: newest, acknowledged: start.acknowledged, in: directory, fileSystem: fileSystem, report: &report)
        let (segment, file, scan) = (newest.segment, newest.file, newest.scan)
        let headerSize = Int64(newest.header.size)
        let (index, indexSize, lastIndexedOffset) = try openIndex(of: newest, fileSystem: fileSystem, report: &report)

        // What survived opening is the log now, acknowledged or not: later damage to it is damage.
        // Made durable first: a writer killed between a write and its fdatasync left records in
        // the page cache only, and a power cut now must not take away what the recovery point
        // is about to call acknowledged (the next opening would refuse to start).
        try file.dataSync()
        let recoveryPoint = try RecoveryPointFile(directory: directory, fileSystem: fileSystem)
        try recoveryPoint.recordDurably(RecoveryPoint(acknowledged: scan.head, segment: segment.firstPosition))
        return Opened(
            report: report, recoveryPoint: recoveryPoint, segment: segment, file: file, headerSize: headerSize,
            index: index, lastRecord: scan.lastRecord, size: max(scan.validEnd, headerSize), indexSize: indexSize,
            lastIndexedOffset: indexSize == 0 ? headerSize : (lastIndexedOffset ?? headerSize))
    }

    /// Where recovery starts: the segment the recovery point names as the newest (which must
    /// exist), or, without a readable recovery point, the last segment listed (a first one
    /// made in an empty directory); and what the recovery point says was acknowledged.
    private static func startingSegment(
        in directory: String, fileSystem: any FileSystem
    ) throws -> (segment: SegmentFile, acknowledged: UInt64, listed: Bool, problem: String?) {
        let segment: SegmentFile
        var (acknowledged, listed, problem): (UInt64, Bool, String?) = (0, false, nil)
        let reading = RecoveryPoint.read(in: directory, fileSystem: fileSystem)
        switch reading {
        case .valid(let point):
            acknowledged = point.acknowledged
            segment = SegmentFile(directory: directory, firstPosition: max(point.segment, 1))
            guard fileSystem.exists(segment.path) else {
                throw EventLogError.damaged(
                    LogDamage(
                        segment: segment.path, offset: 0, firstPosition: segment.firstPosition,
                        lastPosition: max(acknowledged, segment.firstPosition),
                        reason: "the recovery point names this segment as the newest, but it is missing",
                        notCut: "positions through \(acknowledged) were acknowledged"))
            }
        case .missing, .damaged:
            if case .damaged(let reason) = reading { problem = "unreadable (\(reason))" }
            listed = true
            let segments = try SegmentFile.list(in: directory, fileSystem: fileSystem)
            if let newest = segments.last {
                segment = newest
            } else {
                segment = SegmentFile(directory: directory, firstPosition: 1)
                try create(segment, previous: 0, fileSystem: fileSystem)
            }
        }
        // HEAD named the newest segment before the recovery point did; it is stale now. One left
        // behind (the removal failed) is removed at the next opening: nothing reads it.
        if fileSystem.exists(directory + "/HEAD") { try? fileSystem.remove(directory + "/HEAD") }
        return (segment, acknowledged, listed, problem)
    }

    /// The newest segment, opened, its header and its records scanned whole.
    struct ScannedSegment {
        var segment: SegmentFile
        var file: PosixFile
        var header: SegmentFile.Header
        var scan: SegmentScanner.Result
        /// The bytes scanned on the way, in every segment from the start.
        var scanned: Int64
    }

    /// Scans from `start` on, segment after segment, while a whole segment is followed by the
    /// next one: a recovery point may lag behind a segment begun after it was recorded.
    private static func scanToNewest(
        from start: SegmentFile, in directory: String, options: Options
    ) throws -> ScannedSegment {
        let fileSystem = options.fileSystem
        var segment = start
        var file = try PosixFile(path: segment.path, flags: O_RDWR, fileSystem: fileSystem)
        var scanned: Int64 = 0
        while true {
            // A segment of a later format is not damage: refused as it is (unsupportedFormat).
            let header: SegmentFile.Header
            do {
                header = try segment.readHeader(from: file)
            } catch EventLogError.badSegmentHeader(_, let problem) {
                throw EventLogError.damaged(
                    LogDamage(
                        segment: segment.path, offset: 0, firstPosition: segment.firstPosition, lastPosition: nil,
                        reason: "bad segment header: \(problem)", notCut: "it is the newest segment's header"))
            }
            let scan = try SegmentScanner(segment: segment, file: file, header: header)
                .scan(indexInterval: options.indexInterval)
            scanned += scan.fileSize
            let next = SegmentFile(directory: directory, firstPosition: scan.head + 1)
            guard scan.bad == nil, next.firstPosition != segment.firstPosition, fileSystem.exists(next.path) else {
                return ScannedSegment(segment: segment, file: file, header: header, scan: scan, scanned: scanned)
            }
            segment = next
            file = try PosixFile(path: segment.path, flags: O_RDWR, fileSystem: fileSystem)
        }
    }

    /// Cuts the newest segment's bad tail if it is a torn write that nothing acknowledged nor
    /// follows, and says so in `report`; any other damage, or a log ending before what was
    /// acknowledged, is refused (``EventLogError/damaged(_:)``), naming what a repair would lose.
    private static func cutTornTail(
        of newest: ScannedSegment, acknowledged: UInt64, in directory: String, fileSystem: any FileSystem,
        report: inout RecoveryReport
    ) throws {
        let (segment, file, scan) = (newest.segment, newest.file, newest.scan)
        if let bad = scan.bad {
            let later = try SegmentFile.list(in: directory, fileSystem: fileSystem).first { $0 > segment }
            let lastLost = try SegmentScanner(segment: segment, file: file, header: newest.header).lastPositionLost(
                at: bad, fileSize: scan.fileSize, nextSegment: later?.firstPosition, acknowledged: acknowledged)
            func damage(_ notCut: String) -> EventLogError {
                .damaged(
                    LogDamage(
                        segment: segment.path, offset: bad.offset, firstPosition: bad.position, lastPosition: lastLost,
                        reason: bad.reason, notCut: notCut))
            }
            if later != nil { throw damage("later segments follow it") }
            if bad.position <= acknowledged {
                throw damage("position \(bad.position) was acknowledged (the recovery point is \(acknowledged))")
            }
            if !bad.looksTorn {
                throw damage(
                    "the bytes are not a torn write (the record is whole, and written bytes follow any zeros in it)")
            }
            if bad.resumesAt != nil { throw damage("valid records follow it") }
            try file.truncate(to: scan.validEnd)
            try file.dataSync()
            report.truncatedSegment = segment.name
            report.truncatedAt = scan.validEnd
            report.droppedBytes = scan.fileSize - scan.validEnd
            report.reason = bad.reason
        }
        if scan.head < acknowledged {
            throw EventLogError.damaged(
                LogDamage(
                    segment: segment.path, offset: scan.validEnd, firstPosition: scan.head + 1,
                    lastPosition: acknowledged, reason: "the log ends at position \(scan.head)",
                    notCut: "positions through \(acknowledged) were acknowledged"))
        }
    }

    /// The newest segment's index, kept if it matches the segment, else rebuilt from the scan;
    /// nil (readers scan the segment), said in `report`, when it cannot be rebuilt. The index
    /// is a hint. With it, the offset its last entry points at (nil for none).
    private static func openIndex(
        of newest: ScannedSegment, fileSystem: any FileSystem, report: inout RecoveryReport
    ) throws -> (index: PosixFile?, size: Int64, lastOffset: Int64?) {
        let (segment, file, scan) = (newest.segment, newest.file, newest.scan)
        var index: PosixFile? = try PosixFile(path: segment.indexPath, flags: O_RDWR | O_CREAT, fileSystem: fileSystem)
        var indexSize = Int64(scan.indexEntries.count * SparseIndex.entrySize)
        var lastOffset = scan.indexEntries.last?.offset
        // One that cannot be read is rebuilt as one that does not match: the scan has its entries.
        let existing = try? SparseIndex.read(segment.indexPath, fileSystem: fileSystem)
        let lastEntryFits = existing?.last.map { $0.offset < scan.validEnd } ?? true
        let headerSize = Int64(newest.header.size)
        if let existing, lastEntryFits,
            try SparseIndex.matches(existing, segment: segment, file: file, recordsStart: headerSize),
            try index?.size == Int64(existing.count * SparseIndex.entrySize)
        {
            indexSize = Int64(existing.count * SparseIndex.entrySize)
            lastOffset = existing.last?.offset
        } else if let file = index {
            report.rebuiltIndex = try file.size > 0
            var bytes: [UInt8] = []
            for entry in scan.indexEntries { SparseIndex.encode(entry, into: &bytes) }
            do {
                try file.truncate(to: 0)
                try bytes.withUnsafeBytes { try file.write($0, at: 0) }
            } catch {
                // Without an index, readers scan the segment; the writer adds no more entries.
                // Said once, in the report the log's opening logs, as the writer says its own.
                var problem = "\(segment.indexPath) could not be rebuilt (\(error))"
                do {
                    try file.truncate(to: 0)
                } catch let cut {
                    // A partial entry may remain at the end: readers check every entry they use.
                    problem += ", nor cut back to empty (\(cut))"
                }
                report.indexProblem = problem + "; readers scan the segment instead"
                file.close()
                index = nil
                indexSize = 0
                lastOffset = nil
            }
        }
        return (index, indexSize, lastOffset)
    }

    /// The deduplication window of a log opened at `head`: the ids of its last records, reading
    /// only as many as the window holds and finding older segments through the headers' links
    /// rather than a directory listing.
    static func loadWindow(
        capacity: Int, head: UInt64, newest: SegmentFile, directory: String, fileSystem: any FileSystem
    ) throws -> DeduplicationWindow {
        var window = DeduplicationWindow(capacity: capacity)
        guard head > 0 else { return window }
        let from = head > UInt64(window.capacity) ? head - UInt64(window.capacity) : 0
        var segments = [newest]
        while let oldest = segments.first, oldest.firstPosition > from + 1 {
            let previous = try oldest.previousFirstPosition(fileSystem: fileSystem)
            guard previous > 0, previous < oldest.firstPosition else { break }
            segments.insert(SegmentFile(directory: directory, firstPosition: previous), at: 0)
        }
        let cursor = try LogCursor(
            directory: directory, segments: segments, after: from, limit: head, fileSystem: fileSystem)
        while let record = try cursor.next() {
            window.insert(record.id, at: record.position)
        }
        return window
    }
}
