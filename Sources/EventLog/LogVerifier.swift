#if canImport(Glibc)
    import Glibc
#endif

/// Checks every byte of a log directory: each segment's header, every record's framing and
/// checksum, positions without holes or overlaps across segments, the recovery point against
/// the data, and each sparse index against its segment. Reports every bad range, not only the
/// first: after a bad record it goes on from the next valid one.
public enum LogVerifier {
    public struct Report: Sendable, Equatable {
        public var records: UInt64 = 0
        public var segments = 0
        public var bytes: Int64 = 0
        /// The last position read.
        public var head: UInt64 = 0
        /// Every bad range found, in log order.
        public var problems: [Problem] = []
        /// Things that are not damage: an index that does not match its segment (indexes are
        /// hints), an unreadable recovery point.
        public var notes: [String] = []
        /// The newest segment ends in a record being written (only when a writer holds the log).
        public var writeInProgress = false
        /// Ids held by more than one record, with their positions: a log commits an id once, so
        /// a log that has one twice was not written by the bus (a bad import, files mixed by hand).
        public var duplicateIDs: [DuplicateIDFinder.Duplicate] = []
        /// Segments of a log format version this build does not read (a later Bureau wrote
        /// them): not damage, and not read; nothing here can say what they hold.
        public var unsupported: [UnsupportedSegment] = []

        public var ok: Bool { problems.isEmpty && duplicateIDs.isEmpty && unsupported.isEmpty }
        /// The first problem, if any.
        public var problem: Problem? { problems.first }
    }

    /// A segment in a format this build does not read.
    public struct UnsupportedSegment: Sendable, Equatable, CustomStringConvertible {
        public var segment: String
        public var version: UInt32

        public init(segment: String, version: UInt32) {
            self.segment = segment
            self.version = version
        }

        public var description: String {
            EventLogError.unsupportedFormat(segment: segment, version: version).description
        }
    }

    /// A bad range: where it is, which positions it holds, and why.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        public var segment: String
        /// The byte range of the segment that is bad.
        public var offset: Int64
        public var endOffset: Int64
        /// The positions that cannot be read from it.
        public var firstPosition: UInt64
        public var lastPosition: UInt64?
        public var reason: String

        public var positions: String {
            guard let lastPosition else { return "position \(firstPosition)" }
            if lastPosition < firstPosition { return "no position (after \(firstPosition - 1))" }
            return lastPosition == firstPosition
                ? "position \(firstPosition)" : "positions \(firstPosition)…\(lastPosition)"
        }

        /// The first position, for callers of the first problem.
        public var position: UInt64 { firstPosition }

        public var description: String {
            "\(positions), bytes \(offset)..<\(endOffset) of \(segment): \(reason)"
        }
    }

    /// Reads the whole log in `directory`. A torn last record is accepted only while a writer
    /// holds the log (it is being written); otherwise it is reported (starting the bus cuts it).
    ///
    /// - Parameter writerActive: whether a writer holds the log; by default, whether its lock is held.
    public static func verify(
        directory: String, fileSystem: any FileSystem = PosixFileSystem(), writerActive: Bool? = nil,
        progress: (UInt64) -> Void = { _ in }
    ) throws -> Report {
        var report = Report()
        let segments = try SegmentFile.list(in: directory, fileSystem: fileSystem)
        report.segments = segments.count
        let writerActive = try writerActive ?? DirectoryLock.isHeld(directory)
        var acknowledged: UInt64 = 0
        switch RecoveryPoint.read(in: directory, fileSystem: fileSystem) {
        case .valid(let point): acknowledged = point.acknowledged
        case .missing: if !segments.isEmpty { report.notes.append("there is no recovery point") }
        case .damaged(let reason):
            report.notes.append("the recovery point is unreadable (\(reason)); the bus lists the directory instead")
        }
        var expected: UInt64 = 1
        var ids = DuplicateIDFinder()
        for (number, segment) in segments.enumerated() {
            let next = number + 1 < segments.count ? segments[number + 1] : nil
            let file = try PosixFile(path: segment.path, flags: O_RDONLY, fileSystem: fileSystem)
            let size = try file.size
            report.bytes += size
            guard let scanner = try scanner(of: segment, file: file, size: size, report: &report) else {
                expected = next?.firstPosition ?? expected
                continue
            }
            checkContinuity(of: segment, expected: expected, report: &report)
            let starts = try scanRecords(
                of: segment, with: scanner, size: size, next: next, acknowledged: acknowledged,
                writerActive: writerActive, ids: &ids, report: &report, progress: progress)
            expected = max(expected, report.head + 1)
            checkIndex(of: segment, against: starts, fileSystem: fileSystem, report: &report)
        }
        // Positions in a segment of a later format were not read: nothing can be said of them.
        if acknowledged > report.head, report.unsupported.isEmpty {
            report.problems.append(
                Problem(
                    segment: segments.last?.path ?? directory, offset: 0, endOffset: 0,
                    firstPosition: report.head + 1, lastPosition: acknowledged,
                    reason:
                        "the log ends at position \(report.head), but positions through \(acknowledged) were acknowledged"
                ))
        }
        report.duplicateIDs = ids.duplicates()
        return report
    }

    /// A scanner of `segment`'s records after its header; nil for a segment of a later format,
    /// which is listed, not read, and not called damage. A damaged header is a problem, and
    /// its records are looked for where the header's layout puts them.
    private static func scanner(
        of segment: SegmentFile, file: PosixFile, size: Int64, report: inout Report
    ) throws -> SegmentScanner? {
        switch segment.header(from: try file.read(count: SegmentFile.headerSize, at: 0)) {
        case .success(let header):
            return SegmentScanner(segment: segment, file: file, header: header)
        case .failure(.unsupportedVersion(let version)):
            report.unsupported.append(UnsupportedSegment(segment: segment.path, version: version))
            return nil
        case .failure(.damaged(let problem)):
            report.problems.append(
                Problem(
                    segment: segment.path, offset: 0, endOffset: Int64(min(size, Int64(SegmentFile.headerSize))),
                    firstPosition: segment.firstPosition, lastPosition: segment.firstPosition - 1,
                    reason: "bad segment header: \(problem)"))
            return SegmentScanner(segment: segment, damagedHeaderFile: file)
        }
    }

    /// Positions missing before `segment`, or repeated by it, given the next one `expected`.
    private static func checkContinuity(of segment: SegmentFile, expected: UInt64, report: inout Report) {
        if segment.firstPosition > expected {
            report.problems.append(
                Problem(
                    segment: segment.path, offset: 0, endOffset: 0, firstPosition: expected,
                    lastPosition: segment.firstPosition - 1,
                    reason: "positions are missing before this segment (no segment holds them)"))
        } else if segment.firstPosition < expected {
            report.problems.append(
                Problem(
                    segment: segment.path, offset: 0, endOffset: 0, firstPosition: segment.firstPosition,
                    lastPosition: expected - 1, reason: "this segment repeats positions an earlier one holds"))
        }
    }

    /// Reads every record of `segment`, past damage to where valid records resume, and says
    /// what is damaged and what it loses; a torn unacknowledged tail is a write in progress
    /// while a writer holds the log, else a problem the bus's start cuts. Returns the position
    /// that starts at each byte offset, for the index check.
    private static func scanRecords(
        of segment: SegmentFile, with scanner: SegmentScanner, size: Int64, next: SegmentFile?,
        acknowledged: UInt64, writerActive: Bool, ids: inout DuplicateIDFinder, report: inout Report,
        progress: (UInt64) -> Void
    ) throws -> [Int64: UInt64] {
        var starts: [Int64: UInt64] = [:]
        var from = scanner.recordsStart
        var position = segment.firstPosition
        while true {
            let scan = try scanner.scan(from: from, expecting: position) { record, offset in
                starts[offset] = record.position
                ids.add(record.id, at: record.position)
                report.records += 1
                if record.position % 65_536 == 0 { progress(record.position) }
            }
            report.head = max(report.head, scan.head)
            guard let bad = scan.bad else { break }
            let isTail = next == nil && bad.resumesAt == nil
            if isTail, bad.looksTorn, bad.position > acknowledged {
                if writerActive {
                    report.writeInProgress = true
                } else {
                    report.problems.append(
                        Problem(
                            segment: segment.path, offset: bad.offset, endOffset: size,
                            firstPosition: bad.position, lastPosition: bad.position - 1,
                            reason:
                                "\(bad.reason): a torn write that was never acknowledged (starting the bus cuts it)"
                        ))
                }
                break
            }
            let last = try scanner.lastPositionLost(
                at: bad, fileSize: size, nextSegment: next?.firstPosition, acknowledged: acknowledged)
            report.problems.append(
                Problem(
                    segment: segment.path, offset: bad.offset, endOffset: bad.resumesAt?.offset ?? size,
                    firstPosition: bad.position, lastPosition: last, reason: bad.reason))
            guard let resume = bad.resumesAt else {
                report.head = max(report.head, last)
                break
            }
            from = resume.offset
            position = resume.position
        }
        return starts
    }

    /// A note when `segment`'s index names a record that does not start where it says, or goes
    /// back: indexes are hints, readers check them, a repair rebuilds them.
    private static func checkIndex(
        of segment: SegmentFile, against starts: [Int64: UInt64], fileSystem: any FileSystem, report: inout Report
    ) {
        let entries: [SparseIndex.Entry]
        do {
            entries = try SparseIndex.read(segment.indexPath, fileSystem: fileSystem)
        } catch {
            report.notes.append(
                "the index \(segment.indexPath) is unreadable (\(error)); readers scan its segment instead, "
                    + "and a repair rebuilds it")
            return
        }
        if let wrong = entries.first(where: { starts[$0.offset] != $0.position })
            ?? zip(entries, entries.dropFirst()).first(where: { $0.1.position <= $0.0.position })?.1
        {
            report.notes.append(
                "the index \(segment.indexPath) does not match its segment (an entry for position \(wrong.position) "
                    + "at byte \(wrong.offset)); indexes are hints: readers check them, and a repair rebuilds it")
        }
    }
}
