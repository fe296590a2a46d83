#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads records in position order from a log directory, one after another.
///
/// Safe while the bus daemon appends: a cursor returns only records whose checksum holds and
/// stops (returns nil) where the valid data ends; call ``next()`` again later to continue from
/// there. A bad record the log acknowledged (at or below its ``RecoveryPoint``), or one before
/// the newest segment's end, is damage: ``next()`` throws naming its segment, offset and
/// position. Past the recovery point a bad record ends the data, and ``end`` says how:
/// a write in progress or torn (which the writer cuts when it next opens the log), or bytes
/// that are not a torn write.
public final class LogCursor {
    /// How the cursor came to stop at the end of the data.
    public enum End: Equatable, Sendable {
        /// Not at the end yet, or the data ends exactly after a record.
        case clean
        /// The newest segment ends with an incomplete record, or one with zeros where its bytes
        /// should be: a write in progress, or torn and never acknowledged.
        case partial(segment: String, offset: Int64)
        /// The newest segment ends with bytes that are not a valid record nor a torn write.
        case invalid(segment: String, offset: Int64, reason: String)
    }

    /// The position the next record will have.
    public private(set) var nextPosition: UInt64
    /// Whether the last nil from ``next()`` was a clean end.
    public private(set) var end: End = .clean

    private let directory: String
    private let fileSystem: any FileSystem
    private let limit: UInt64?
    /// The caller gave every segment up to the limit: never list the directory.
    private let segmentsAreComplete: Bool
    private var segments: [SegmentFile]
    private var segmentIndex: Int
    private var file: PosixFile?
    /// The open segment's header: where its records start.
    private var header = SegmentFile.Header(layout: .linked(previousFirstPosition: 0))
    /// File offset of `buffer[0]`.
    private var bufferFileOffset: Int64 = 0
    private var buffer: [UInt8]
    private var start = 0
    private var count = 0
    /// The last acknowledged position, as the recovery point said when last read.
    private var acknowledged: UInt64 = 0

    /// The byte offset in the current segment where the next record starts.
    public var offset: Int64 { bufferFileOffset + Int64(start) }
    /// The name of the segment being read.
    public var segmentName: String? { segments.indices.contains(segmentIndex) ? segments[segmentIndex].name : nil }

    /// A cursor over records with position > `after`, and ≤ `limit` if given.
    ///
    /// - Parameter limit: the last position to read. A caller that knows it is committed (the
    ///   bus's published head) lets the cursor move to the next segment without listing the
    ///   directory at every end of data.
    public convenience init(
        directory: String, after position: UInt64, limit: UInt64? = nil, bufferSize: Int = 256 << 10,
        fileSystem: any FileSystem = PosixFileSystem()
    ) throws {
        try self.init(
            directory: directory, segments: try SegmentFile.list(in: directory, fileSystem: fileSystem),
            after: position, limit: limit, complete: false, bufferSize: bufferSize, fileSystem: fileSystem)
    }

    /// A cursor over segments the caller already knows, oldest first; `complete` says they
    /// include every segment up to `limit`, so the directory is never listed.
    init(
        directory: String, segments: [SegmentFile], after position: UInt64, limit: UInt64?, complete: Bool = true,
        bufferSize: Int = 256 << 10, fileSystem: any FileSystem
    ) throws {
        self.directory = directory
        self.fileSystem = fileSystem
        self.limit = limit
        segmentsAreComplete = complete
        nextPosition = position + 1
        buffer = [UInt8](repeating: 0, count: max(bufferSize, 4 << 10))
        self.segments = segments
        segmentIndex = 0
        acknowledged = LogCursor.acknowledged(in: directory, fileSystem: fileSystem)
        try seek(after: position)
    }

    /// The recovery point's acknowledged position, or 0: every position at or below it was
    /// acknowledged, so a log whose data ends before it has lost the rest.
    public static func acknowledged(in directory: String, fileSystem: any FileSystem) -> UInt64 {
        if case .valid(let point) = RecoveryPoint.read(in: directory, fileSystem: fileSystem) {
            return point.acknowledged
        }
        return 0
    }

    /// Moves the cursor so that ``next()`` returns the record after `position`, reusing its
    /// buffer (and the open segment when the position is in it).
    public func seek(after position: UInt64) throws {
        nextPosition = position + 1
        end = .clean
        // A position at or past the newest segment known may be in a segment created since,
        // unless the caller's limit says nothing newer is committed.
        if segments.isEmpty || segments.last.map({ $0.firstPosition <= nextPosition }) == true,
            limit.map({ nextPosition <= $0 }) != false, !segmentsAreComplete
        {
            segments = try SegmentFile.list(in: directory, fileSystem: fileSystem)
        }
        guard !segments.isEmpty else {
            file = nil
            return
        }
        let index = segments.lastIndex(where: { $0.firstPosition <= nextPosition }) ?? 0
        if index != segmentIndex || file == nil {
            file = nil
            try open(index, seekingTo: nextPosition)
        } else {
            try reposition(in: segments[index], seekingTo: nextPosition)
        }
    }

    /// The next record, or nil at the end of the valid data.
    public func next() throws -> LogRecord? {
        try nextRecord { header, body in LogRecord(position: header.position, id: header.id, body: Data(body)) }
    }

    /// Reads the next record as ``next()`` does, but appends its body to `bodies` instead of
    /// giving it a `Data` of its own: returns its position, its id and where its body lies in
    /// `bodies`. For readers that take many records at a time (the tools' read-ahead): one
    /// allocation for many bodies, freed together.
    public func next(
        appendingBodyTo bodies: inout RecordBodies
    ) throws -> (position: UInt64, id: EventID, body: Range<Int>)? {
        try nextRecord { header, body in (header.position, header.id, bodies.append(body)) }
    }

    /// The next record, made by `make` from its header and its body's bytes (valid only during
    /// the call).
    private func nextRecord<Record>(
        _ make: (RecordFormat.Header, UnsafeRawBufferPointer) -> Record
    ) throws -> Record? {
        if let limit, nextPosition > limit { return nil }
        while true {
            guard file != nil else {
                guard try advanceSegment() else { return nil }
                continue
            }
            let located = buffer.withUnsafeBytes { raw in
                RecordFormat.locate(UnsafeRawBufferPointer(rebasing: raw[start..<start + count]))
            }
            switch located {
            case .record(let header):
                if header.position < nextPosition {
                    consume(header.size)
                    continue
                }
                guard header.position == nextPosition else {
                    throw EventLogError.corruptRecord(
                        segment: segments[segmentIndex].path, offset: offset, position: nextPosition,
                        reason: "found position \(header.position) where \(nextPosition) should be")
                }
                let record = buffer.withUnsafeBytes { raw in
                    make(
                        header,
                        UnsafeRawBufferPointer(
                            rebasing: raw[start + header.body.lowerBound..<start + header.body.upperBound]))
                }
                consume(header.size)
                nextPosition += 1
                end = .clean
                return record
            case .incomplete(let needed):
                if try refill(needing: needed) { continue }
                if count == 0 {
                    guard try advanceSegment() else {
                        end = .clean
                        return nil
                    }
                    continue
                }
                if try endOfData(reason: "incomplete record of \(count) bytes at the end of the segment", torn: true) {
                    continue
                }
                return nil
            case .invalid(let reason, _):
                if try endOfData(reason: reason, torn: nil) { continue }
                return nil
            }
        }
    }

    /// The data stops at a bad record: damage if anything follows it or the log acknowledged
    /// its position; otherwise the end of the data for now. Returns true if the record proved
    /// valid when read again (it was being written), and reading goes on.
    private func endOfData(reason: String, torn: Bool?) throws -> Bool {
        let segment = segments[segmentIndex]
        func damage(_ why: String) -> EventLogError {
            .corruptRecord(segment: segment.path, offset: offset, position: nextPosition, reason: "\(reason); \(why)")
        }
        if try laterSegmentExists() { throw damage("later segments follow it") }
        if nextPosition <= acknowledged { throw damage("the log acknowledged it") }
        // The writer may have acknowledged it since the recovery point was read.
        acknowledged = max(acknowledged, LogCursor.acknowledged(in: directory, fileSystem: fileSystem))
        if nextPosition <= acknowledged {
            // Read it again: what was read may have been a write in progress.
            let here = offset
            try reposition(at: here)
            if case .record = try SegmentScanner.readRecord(try currentFile(), at: here) { return true }
            throw damage("the log acknowledged it")
        }
        let looksTorn =
            try torn
            ?? SegmentScanner(segment: segment, file: try currentFile(), header: header)
            .looksTorn(at: offset, fileSize: try currentFile().size)
        // Forget the bytes read so far, so that a later call reads them again.
        bufferFileOffset += Int64(start)
        start = 0
        count = 0
        end =
            looksTorn
            ? .partial(segment: segment.path, offset: offset)
            : .invalid(segment: segment.path, offset: offset, reason: reason)
        return false
    }

    private func currentFile() throws -> PosixFile {
        guard let file else { throw EventLogError.io(operation: "read", path: directory, errno: EBADF) }
        return file
    }

    private func consume(_ size: Int) {
        start += size
        count -= size
    }

    /// Reads more of the current segment so that at least `needed` bytes are buffered.
    /// Returns false if the file has no more bytes now.
    private func refill(needing needed: Int) throws -> Bool {
        guard let file else { return false }
        if start > 0 {
            let (from, length) = (start, count)
            buffer.withUnsafeMutableBytes { raw in
                guard let base = raw.baseAddress else { return }
                base.copyMemory(from: base + from, byteCount: length)
            }
            bufferFileOffset += Int64(start)
            start = 0
        }
        if needed > buffer.count {
            buffer += [UInt8](repeating: 0, count: needed - buffer.count)
        }
        let free = buffer.count - count
        let got = try buffer.withUnsafeMutableBytes { raw in
            try file.read(
                into: UnsafeMutableRawBufferPointer(rebasing: raw[count..<count + free]),
                at: bufferFileOffset + Int64(count))
        }
        count += got
        return got > 0
    }

    private func laterSegmentExists() throws -> Bool {
        if segmentIndex + 1 < segments.count { return true }
        if segmentsAreComplete { return false }
        segments = try SegmentFile.list(in: directory, fileSystem: fileSystem)
        return segmentIndex + 1 < segments.count
    }

    /// Moves to the segment that starts at `nextPosition`; false if there is none yet.
    private func advanceSegment() throws -> Bool {
        let known = segmentIndex + 1 < segments.count
        if !known {
            // Listing the directory costs a system call per entry; skip it when the caller's
            // limit says nothing newer is committed.
            if let limit, nextPosition > limit { return false }
            if segmentsAreComplete { return false }
            segments = try SegmentFile.list(in: directory, fileSystem: fileSystem)
        }
        var candidate = file == nil ? segmentIndex : segmentIndex + 1
        guard segments.indices.contains(candidate) else { return false }
        // Behind (the segment list was stale when the cursor was placed): jump to the segment
        // that holds the position.
        while candidate + 1 < segments.count, segments[candidate + 1].firstPosition <= nextPosition {
            candidate += 1
        }
        let segment = segments[candidate]
        guard segment.firstPosition <= nextPosition else {
            throw EventLogError.missingPositions(
                after: nextPosition - 1, segment: segment.path, startsAt: segment.firstPosition)
        }
        return try open(candidate, seekingTo: nextPosition)
    }

    /// Opens a segment and finds where `position` is, or the start.
    @discardableResult
    private func open(_ index: Int, seekingTo position: UInt64) throws -> Bool {
        let segment = segments[index]
        let file = try PosixFile(path: segment.path, flags: O_RDONLY, fileSystem: fileSystem)
        let header = try segment.readHeader(from: file)
        segmentIndex = index
        self.file = file
        self.header = header
        try reposition(in: segment, seekingTo: position)
        return true
    }

    /// Starts reading the open segment at the index entry nearest before `position`.
    private func reposition(in segment: SegmentFile, seekingTo position: UInt64) throws {
        guard let file else { return }
        var offset = Int64(header.size)
        // An index that cannot be read costs only speed: the segment is read from its start, as
        // without one. Opening the log rebuilds the newest; `bureau log verify` names the others.
        if position > segment.firstPosition,
            let entries = try? SparseIndex.read(segment.indexPath, fileSystem: fileSystem),
            let entry = SparseIndex.floor(entries, position),
            entry.offset >= offset, entry.position >= segment.firstPosition,
            case .record(let record, _) = try SegmentScanner.readRecord(file, at: entry.offset),
            record.position == entry.position
        {
            // An index entry is only a hint: used once the record it points at is checked.
            offset = entry.offset
        }
        try reposition(at: offset)
    }

    /// Empties the buffer so that reading starts at `offset` of the open segment.
    private func reposition(at offset: Int64) throws {
        start = 0
        count = 0
        bufferFileOffset = offset
    }
}
