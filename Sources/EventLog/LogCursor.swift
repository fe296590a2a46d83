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
/// Safe while the bus daemon appends: a cursor returns only records whose checksum holds
/// and stops (returns nil) at the first record that is not complete yet; call ``next()``
/// again later to continue from there. A damaged record before the newest segment's tail
/// is an error, because a writer never leaves one there.
public final class LogCursor {
    /// How the cursor came to stop at the end of the data, for ``LogVerifier``.
    public enum End: Equatable, Sendable {
        /// Not at the end yet, or the data ends exactly after a record.
        case clean
        /// The newest segment ends with an incomplete record (a write in progress or torn).
        case partial(segment: String, offset: Int64)
        /// The newest segment ends with bytes that are not a valid record.
        case invalid(segment: String, offset: Int64, reason: String)
    }

    /// The position the next record will have.
    public private(set) var nextPosition: UInt64
    /// Whether the last nil from ``next()`` was a clean end.
    public private(set) var end: End = .clean

    private let directory: String
    private let limit: UInt64?
    /// The caller gave every segment up to the limit: never list the directory.
    private let segmentsAreComplete: Bool
    private var segments: [SegmentFile]
    private var segmentIndex: Int
    private var file: PosixFile?
    /// File offset of `buffer[0]`.
    private var bufferFileOffset: Int64 = 0
    private var buffer: [UInt8]
    private var start = 0
    private var count = 0

    /// The byte offset in the current segment where the next record starts.
    public var offset: Int64 { bufferFileOffset + Int64(start) }
    /// The name of the segment being read.
    public var segmentName: String? { segments.indices.contains(segmentIndex) ? segments[segmentIndex].name : nil }

    /// A cursor over records with position > `after`, and ≤ `limit` if given.
    ///
    /// A limit the caller knows is committed (the bus's published head) lets the cursor move
    /// to the next segment without listing the directory at every end of data.
    public convenience init(
        directory: String, after position: UInt64, limit: UInt64? = nil, bufferSize: Int = 256 << 10
    )
        throws
    {
        try self.init(
            directory: directory, segments: try SegmentFile.list(in: directory), after: position, limit: limit,
            complete: false, bufferSize: bufferSize)
    }

    /// A cursor over segments the caller already knows, oldest first; `complete` says they
    /// include every segment up to `limit`, so the directory is never listed.
    init(
        directory: String, segments: [SegmentFile], after position: UInt64, limit: UInt64?, complete: Bool = true,
        bufferSize: Int = 256 << 10
    ) throws {
        self.directory = directory
        self.limit = limit
        segmentsAreComplete = complete
        nextPosition = position + 1
        buffer = [UInt8](repeating: 0, count: max(bufferSize, 4 << 10))
        self.segments = segments
        segmentIndex = 0
        try seek(after: position)
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
            segments = try SegmentFile.list(in: directory)
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
        if let limit, nextPosition > limit { return nil }
        while true {
            guard file != nil else {
                guard try advanceSegment() else { return nil }
                continue
            }
            let parsed = buffer.withUnsafeBytes { raw in
                RecordFormat.parse(UnsafeRawBufferPointer(rebasing: raw[start..<start + count]))
            }
            switch parsed {
            case .record(let record, let size):
                if record.position < nextPosition {
                    consume(size)
                    continue
                }
                guard record.position == nextPosition else {
                    throw EventLogError.corruptRecord(
                        segment: segments[segmentIndex].path, offset: offset, position: nextPosition,
                        reason: "found position \(record.position) where \(nextPosition) should be")
                }
                consume(size)
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
                if try laterSegmentExists() {
                    throw EventLogError.corruptRecord(
                        segment: segments[segmentIndex].path, offset: offset, position: nextPosition,
                        reason: "incomplete record of \(count) bytes before the end of the segment")
                }
                end = .partial(segment: segments[segmentIndex].path, offset: offset)
                return nil
            case .invalid(let reason, _):
                if try laterSegmentExists() {
                    throw EventLogError.corruptRecord(
                        segment: segments[segmentIndex].path, offset: offset, position: nextPosition, reason: reason)
                }
                // At the newest segment's tail this may be a write in progress: forget the bytes
                // read so far, so that a later call reads them again.
                bufferFileOffset += Int64(start)
                start = 0
                count = 0
                end = .invalid(segment: segments[segmentIndex].path, offset: offset, reason: reason)
                return nil
            }
        }
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
            buffer.withUnsafeMutableBytes { raw in
                raw.baseAddress!.copyMemory(from: raw.baseAddress! + start, byteCount: count)
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
        segments = try SegmentFile.list(in: directory)
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
            segments = try SegmentFile.list(in: directory)
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

    /// Opens a segment and finds where `position` is, or the start; false if its header is not written yet.
    @discardableResult
    private func open(_ index: Int, seekingTo position: UInt64) throws -> Bool {
        let segment = segments[index]
        let file = try PosixFile(path: segment.path, flags: O_RDONLY)
        let header = try file.read(count: SegmentFile.headerSize, at: 0)
        if let problem = segment.problem(withHeader: header) {
            // A segment whose header is still being written is the newest one being created.
            if header.count < SegmentFile.headerSize && index == segments.count - 1 { return false }
            throw EventLogError.badSegmentHeader(segment: segment.path, reason: problem)
        }
        segmentIndex = index
        self.file = file
        try reposition(in: segment, seekingTo: position)
        return true
    }

    /// Starts reading the open segment at the index entry nearest before `position`.
    private func reposition(in segment: SegmentFile, seekingTo position: UInt64) throws {
        guard let file else { return }
        start = 0
        count = 0
        bufferFileOffset = Int64(SegmentFile.headerSize)
        if position > segment.firstPosition,
            let entry = SparseIndex.floor(SparseIndex.read(segment.indexPath), position),
            try recordStarts(at: entry.offset, withPosition: entry.position, in: file)
        {
            bufferFileOffset = entry.offset
        }
    }

    /// Whether a valid record with `position` starts at `offset` (an index entry is only a hint).
    private func recordStarts(at offset: Int64, withPosition position: UInt64, in file: PosixFile) throws -> Bool {
        let header = try file.read(count: RecordFormat.headerSize, at: offset)
        guard header.count == RecordFormat.headerSize else { return false }
        let length = header.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: 0, as: UInt32.self).littleEndian) }
        guard length <= RecordFormat.maxBodySize else { return false }
        let bytes = try file.read(count: RecordFormat.headerSize + length, at: offset)
        if case .record(let record, _) = bytes.withUnsafeBytes({ RecordFormat.parse($0) }) {
            return record.position == position
        }
        return false
    }
}
