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
        var listed = false
        var problem: String?
        var acknowledged: UInt64 = 0
        var segment: SegmentFile
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
        // HEAD named the newest segment before the recovery point did; it is stale now.
        if fileSystem.exists(directory + "/HEAD") { try? fileSystem.remove(directory + "/HEAD") }

        var file = try PosixFile(path: segment.path, flags: O_RDWR, fileSystem: fileSystem)
        var scan: SegmentScanner.Result
        var scanned: Int64 = 0
        var header: SegmentFile.Header
        while true {
            // A segment of a later format is not damage: refused as it is (unsupportedFormat).
            do {
                header = try segment.readHeader(from: file)
            } catch EventLogError.badSegmentHeader(_, let problem) {
                throw EventLogError.damaged(
                    LogDamage(
                        segment: segment.path, offset: 0, firstPosition: segment.firstPosition, lastPosition: nil,
                        reason: "bad segment header: \(problem)", notCut: "it is the newest segment's header"))
            }
            scan = try SegmentScanner(segment: segment, file: file, header: header)
                .scan(indexInterval: options.indexInterval)
            scanned += scan.fileSize
            let next = SegmentFile(directory: directory, firstPosition: scan.head + 1)
            guard scan.bad == nil, next.firstPosition != segment.firstPosition, fileSystem.exists(next.path) else {
                break
            }
            segment = next
            file = try PosixFile(path: segment.path, flags: O_RDWR, fileSystem: fileSystem)
        }

        var report = RecoveryReport(head: scan.head, newestSegment: segment.name, scannedBytes: scanned)
        report.acknowledged = acknowledged
        report.listedDirectory = listed
        report.recoveryPointProblem = problem
        if let bad = scan.bad {
            let later = try SegmentFile.list(in: directory, fileSystem: fileSystem).first { $0 > segment }
            let lastLost = try SegmentScanner(segment: segment, file: file, header: header).lastPositionLost(
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

        // The index is a hint: rebuilt when it does not match the segment.
        var index: PosixFile? = try PosixFile(path: segment.indexPath, flags: O_RDWR | O_CREAT, fileSystem: fileSystem)
        var indexSize = Int64(scan.indexEntries.count * SparseIndex.entrySize)
        let existing = SparseIndex.read(segment.indexPath, fileSystem: fileSystem)
        let lastEntryFits = existing.last.map { $0.offset < scan.validEnd } ?? true
        let headerSize = Int64(header.size)
        if lastEntryFits, try SparseIndex.matches(existing, segment: segment, file: file, recordsStart: headerSize),
            try index?.size == Int64(existing.count * SparseIndex.entrySize)
        {
            indexSize = Int64(existing.count * SparseIndex.entrySize)
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
            }
        }

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
            lastIndexedOffset: indexSize == 0
                ? headerSize : (SparseIndex.read(segment.indexPath, fileSystem: fileSystem).last?.offset ?? headerSize))
    }
}
