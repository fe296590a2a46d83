#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Makes a damaged log whole again, without deleting anything: each damaged segment is
/// rewritten with its valid records as they were and a placeholder record for each position
/// the damage held, and the original segment is moved into a `damaged-<time>` directory in
/// the log directory. Positions stay contiguous and none is reused; indexes that do not match
/// their segments are rebuilt.
///
/// It takes the log's lock: it refuses to run beside a bus daemon.
public enum LogRepair {
    /// A position the damage held, for the record that stands for it.
    public struct LostPosition: Sendable {
        public var position: UInt64
        /// The id the damaged record's header carries, when its framing could be followed to it
        /// and it names this position. A placeholder that keeps it answers a producer's retry
        /// of that id `DUPLICATE` at this position, as it was acknowledged; without it, the
        /// retry would be stored again.
        public var id: EventID?
        /// The record before it, for its commit time.
        public var previous: LogRecord?
        /// What was wrong, and where.
        public var reason: String
        /// The directory the original segment goes to.
        public var movedTo: String
    }

    /// The record that stands for a lost position: its id and its body.
    public typealias Placeholder = (LostPosition) throws -> (EventID, Data)

    public struct Report: Sendable, CustomStringConvertible {
        /// What ``LogVerifier`` found before the repair.
        public var before: LogVerifier.Report
        /// Positions that are now placeholders.
        public var lost: [ClosedRange<UInt64>] = []
        /// Segments rewritten; their originals are in ``damagedDirectory``.
        public var rewritten: [String] = []
        /// Indexes rebuilt.
        public var rebuiltIndexes: [String] = []
        /// Where the original segments went, with a README saying what was wrong.
        public var damagedDirectory: String?
        /// The log's head afterwards, and how many records it has that are not placeholders.
        public var head: UInt64 = 0
        public var kept: UInt64 = 0
        public var dryRun = false

        public var changed: Bool { !rewritten.isEmpty || !rebuiltIndexes.isEmpty }

        public var description: String {
            guard changed else { return "nothing to repair: every record and index is sound (head \(head))" }
            var lines: [String] = []
            let verb = dryRun ? "would be" : "were"
            for range in lost {
                lines.append(
                    range.count == 1
                        ? "position \(range.lowerBound) is lost: it is now a RecordLost placeholder"
                        : "positions \(range.lowerBound)…\(range.upperBound) are lost: each is now a RecordLost placeholder"
                )
            }
            if !rewritten.isEmpty {
                lines.append(
                    "rewritten: \(rewritten.joined(separator: ", ")); the originals \(verb) moved to "
                        + "\(damagedDirectory ?? "a damaged-<time> directory"), nothing deleted")
            }
            if !rebuiltIndexes.isEmpty { lines.append("indexes rebuilt: \(rebuiltIndexes.joined(separator: ", "))") }
            lines.append(
                "kept: \(kept) record(s) as they were; the log has positions 1…\(head)\(dryRun ? " (dry run: nothing changed)" : "")"
            )
            return lines.joined(separator: "\n")
        }
    }

    /// Repairs the log in `directory` (or says what it would do, with `dryRun`).
    public static func repair(
        directory: String, fileSystem: any FileSystem = PosixFileSystem(), dryRun: Bool = false,
        indexInterval: Int64 = FileEventLog.Options().indexInterval, placeholder: Placeholder
    ) throws -> Report {
        let lock = try DirectoryLock(directory: directory, fileSystem: fileSystem)
        defer { lock.release() }
        let before = try LogVerifier.verify(directory: directory, fileSystem: fileSystem, writerActive: false)
        var report = Report(before: before)
        report.dryRun = dryRun
        report.head = before.head
        // A segment of a later format is not damage, and its records cannot be read here: a
        // repair by this build would move a good segment aside.
        if let later = before.unsupported.first {
            throw EventLogError.failed("\(later); repair it with a Bureau that reads its format")
        }
        if let overlap = before.problems.first(where: { $0.reason.contains("repeats positions") }) {
            throw EventLogError.failed(
                "\(overlap); two segments hold the same positions: move the one that should not be there out of "
                    + "\(directory) by hand, then repair again")
        }
        let segments = try SegmentFile.list(in: directory, fileSystem: fileSystem)
        var acknowledged: UInt64 = 0
        if case .valid(let point) = RecoveryPoint.read(in: directory, fileSystem: fileSystem) {
            acknowledged = point.acknowledged
        }
        let stamp = timestamp()
        let damagedDirectory = directory + "/damaged-" + stamp
        // The rewriter calls `placeholder` only while it rewrites, here.
        let rewrite = try withoutActuallyEscaping(placeholder) { placeholder in
            try Rewriter(
                directory: directory, damagedDirectory: damagedDirectory, acknowledged: acknowledged,
                fileSystem: fileSystem, dryRun: dryRun, indexInterval: indexInterval, placeholder: placeholder
            ).rewrite(segments, problems: before.problems)
        }
        report.lost = rewrite.lost
        report.kept = rewrite.kept
        report.head = rewrite.next - 1
        report.rewritten = rewrite.segments.map { $0.original.name }
        report.rebuiltIndexes = rewrite.indexes.map { SegmentFile.baseName($0.0.firstPosition) + ".idx" }
        guard report.changed else { return report }
        if !rewrite.segments.isEmpty { report.damagedDirectory = damagedDirectory }
        guard !dryRun else { return report }
        let readme =
            ["Moved here by a repair of \(directory) at \(stamp) (UTC). What was wrong:"]
            + before.problems.map { "- \($0)" }
        try install(
            rewrite, in: directory, damagedDirectory: damagedDirectory, readme: readme, head: report.head,
            fileSystem: fileSystem)
        return report
    }

    /// What a repair writes: the damaged segments' repaired copies, written aside (each with
    /// the path of its copy), the indexes to write, and what was kept and lost.
    private struct Rewrite {
        var segments: [(original: SegmentFile, repaired: String)] = []
        var indexes: [(SegmentFile, [SparseIndex.Entry])] = []
        var lost: [ClosedRange<UInt64>] = []
        var kept: UInt64 = 0
        /// The position after the last one written.
        var next: UInt64 = 1
        /// The last record written: a placeholder's commit time comes from it.
        var previous: LogRecord?
        /// The first position of the last segment written, which the next one's header names.
        var previousFirst: UInt64 = 0
    }

    /// How a repair writes its copies: the same for every segment of the log.
    private struct Rewriter {
        let directory: String
        let damagedDirectory: String
        /// The recovery point's acknowledged position: a damaged record at or below it was
        /// acknowledged, and a placeholder stands for it.
        let acknowledged: UInt64
        let fileSystem: any FileSystem
        let dryRun: Bool
        let indexInterval: Int64
        let placeholder: Placeholder

        /// Reads every segment and writes, aside, a repaired copy of each damaged one: every
        /// valid record kept, a placeholder at every position that could have been acknowledged
        /// and is lost (``SegmentScanner/lastPositionLost(at:fileSize:nextSegment:acknowledged:)``),
        /// and a segment of placeholders for positions no segment holds. Nothing in `directory` changes.
        func rewrite(_ segments: [SegmentFile], problems: [LogVerifier.Problem]) throws -> Rewrite {
            var rewrite = Rewrite()
            for (number, segment) in segments.enumerated() {
                // Positions no segment holds come first: a segment of placeholders stands for them.
                if segment.firstPosition > rewrite.next {
                    try fill(rewrite.next...(segment.firstPosition - 1), reason: "no segment holds it", into: &rewrite)
                }
                try copy(
                    segment, nextSegment: number + 1 < segments.count ? segments[number + 1] : nil,
                    damaged: problems.contains { $0.segment == segment.path }, into: &rewrite)
            }
            // The data ends before what was acknowledged (the newest segment cut at a record's
            // end, or gone): those positions are lost too, each with its placeholder.
            if rewrite.next <= acknowledged {
                let end = rewrite.next - 1
                try fill(
                    rewrite.next...acknowledged,
                    reason: "the log ends at position \(end), but positions through \(acknowledged) were acknowledged",
                    into: &rewrite)
            }
            return rewrite
        }

        /// Writes a segment of placeholders for `missing`, positions no segment holds, lost for `reason`.
        private func fill(_ missing: ClosedRange<UInt64>, reason: String, into rewrite: inout Rewrite) throws {
            let filler = SegmentFile(directory: directory, firstPosition: missing.lowerBound)
            var writer = SegmentWriter(segment: filler, previous: rewrite.previousFirst, indexInterval: indexInterval)
            for position in missing {
                try appendPlaceholder(at: position, id: nil, reason: reason, to: &writer, &rewrite)
            }
            rewrite.lost.append(missing)
            rewrite.segments.append((filler, try writer.finish(fileSystem: fileSystem, dryRun: dryRun)))
            rewrite.indexes.append((filler, writer.index))
            rewrite.previousFirst = filler.firstPosition
            rewrite.next = missing.upperBound + 1
        }

        /// Reads `segment` record by record: a `damaged` one is copied with a placeholder for
        /// each position its damage holds; an intact one stays, its index rebuilt if it does not
        /// match.
        private func copy(
            _ segment: SegmentFile, nextSegment: SegmentFile?, damaged: Bool, into rewrite: inout Rewrite
        ) throws {
            let file = try PosixFile(path: segment.path, flags: O_RDONLY, fileSystem: fileSystem)
            // A damaged header is rewritten; records are looked for after the header Bureau writes.
            let scanner =
                switch segment.header(from: try file.read(count: SegmentFile.headerSize, at: 0)) {
                case .success(let header): SegmentScanner(segment: segment, file: file, header: header)
                case .failure: SegmentScanner(segment: segment, damagedHeaderFile: file)
                }
            var writer = SegmentWriter(segment: segment, previous: rewrite.previousFirst, indexInterval: indexInterval)
            var from = scanner.recordsStart
            var position = segment.firstPosition
            while true {
                let scan = try scanner.scan(from: from, expecting: position) { record, _ in
                    writer.append(record)
                    rewrite.previous = record
                    rewrite.kept += 1
                }
                guard let bad = scan.bad else { break }
                let fileSize = try file.size
                let last = try scanner.lastPositionLost(
                    at: bad, fileSize: fileSize, nextSegment: nextSegment?.firstPosition, acknowledged: acknowledged)
                if last >= bad.position {
                    let ids = try scanner.framedRecords(at: bad, end: bad.resumesAt?.offset ?? fileSize).ids
                    let reason = "\(bad.reason) at byte \(bad.offset) of \(segment.name)"
                    for lost in bad.position...last {
                        try appendPlaceholder(at: lost, id: ids[lost], reason: reason, to: &writer, &rewrite)
                    }
                    rewrite.lost.append(bad.position...last)
                }
                guard let resume = bad.resumesAt else { break }
                from = resume.offset
                position = resume.position
            }
            rewrite.next = writer.nextPosition
            if damaged {
                rewrite.segments.append((segment, try writer.finish(fileSystem: fileSystem, dryRun: dryRun)))
                rewrite.indexes.append((segment, writer.index))
            } else if try !LogRepair.indexMatches(
                segment, file: file, recordsStart: scanner.recordsStart, fileSystem: fileSystem)
            {
                // The segment stays as it is: its index points into it, not into the writer's copy
                // (whose header may be longer than a first-layout segment's).
                rewrite.indexes.append((segment, try scanner.scan(indexInterval: indexInterval).indexEntries))
            }
            rewrite.previousFirst = segment.firstPosition
        }

        /// Appends the placeholder record that stands for the lost `position`.
        private func appendPlaceholder(
            at position: UInt64, id: EventID?, reason: String, to writer: inout SegmentWriter,
            _ rewrite: inout Rewrite
        ) throws {
            let (id, body) = try placeholder(
                LostPosition(
                    position: position, id: id, previous: rewrite.previous, reason: reason, movedTo: damagedDirectory))
            let record = LogRecord(position: position, id: id, body: body)
            writer.append(record)
            rewrite.previous = record
        }
    }

    /// Puts a repair in place: the damaged segments and their indexes moved into
    /// `damagedDirectory` with a README saying why, the repaired copies renamed in, the indexes
    /// written, and the recovery point set to `head`; each step durable before the next.
    private static func install(
        _ rewrite: Rewrite, in directory: String, damagedDirectory: String, readme: [String], head: UInt64,
        fileSystem: any FileSystem
    ) throws {
        let rewrittenSegments = rewrite.segments
        let indexes = rewrite.indexes
        if !rewrittenSegments.isEmpty {
            try OwnerOnly.makeDirectory(damagedDirectory, fileSystem: fileSystem)
            try Array((readme.joined(separator: "\n") + "\n").utf8).withUnsafeBytes {
                try PosixFile.replace(damagedDirectory + "/README", with: $0, fileSystem: fileSystem)
            }
        }
        for (original, repaired) in rewrittenSegments {
            if fileSystem.exists(original.path) {
                try move(original.path, to: damagedDirectory + "/" + original.name, fileSystem: fileSystem)
            }
            if fileSystem.exists(original.indexPath) {
                try move(
                    original.indexPath,
                    to: damagedDirectory + "/" + SegmentFile.baseName(original.firstPosition) + ".idx",
                    fileSystem: fileSystem)
            }
            try move(repaired, to: original.path, fileSystem: fileSystem)
        }
        for (segment, entries) in indexes {
            var bytes: [UInt8] = []
            for entry in entries { SparseIndex.encode(entry, into: &bytes) }
            try bytes.withUnsafeBytes { try PosixFile.replace(segment.indexPath, with: $0, fileSystem: fileSystem) }
        }
        try PosixFile.syncDirectory(directory, fileSystem: fileSystem)
        if !rewrittenSegments.isEmpty { try PosixFile.syncDirectory(damagedDirectory, fileSystem: fileSystem) }
        let newest = try SegmentFile.list(in: directory, fileSystem: fileSystem).last
        let point = RecoveryPoint(acknowledged: head, segment: newest?.firstPosition ?? 1)
        try point.bytes.withUnsafeBytes {
            try PosixFile.replace(RecoveryPoint.path(in: directory), with: $0, fileSystem: fileSystem)
        }
    }

    /// Whether `segment`'s index can stay: it is missing (nothing to mend) or it matches the
    /// segment. One that cannot be read is rebuilt like one that does not match.
    private static func indexMatches(
        _ segment: SegmentFile, file: PosixFile, recordsStart: Int64, fileSystem: any FileSystem
    ) throws -> Bool {
        let entries: [SparseIndex.Entry]
        do {
            entries = try SparseIndex.read(segment.indexPath, fileSystem: fileSystem)
        } catch {
            return false
        }
        return try SparseIndex.matches(entries, segment: segment, file: file, recordsStart: recordsStart)
    }

    private static func move(_ from: String, to: String, fileSystem: any FileSystem) throws {
        do {
            try fileSystem.rename(from, to: to)
        } catch {
            throw EventLogError.io(operation: "rename", path: from, errno: error.code)
        }
    }

    /// `20261123T101500Z`, for the name of the directory the damage goes to.
    private static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }
}
