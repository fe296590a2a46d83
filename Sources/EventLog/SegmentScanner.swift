#if canImport(Glibc)
    import Glibc
#endif

/// Reads a segment record by record from an offset, checking each, and says how it ends:
/// cleanly, or at a bad record that it classifies as a torn write or as damage.
///
/// Opening the log scans its newest segment with it; ``LogVerifier`` and ``LogRepair`` scan
/// every segment.
struct SegmentScanner {
    /// A record that is not valid where a record should start.
    struct BadRecord: Equatable, Sendable {
        /// Byte offset in the segment.
        var offset: Int64
        /// The position the record should have.
        var position: UInt64
        var reason: String
        /// Whether it looks like a write that never completed (the bytes run past the end of
        /// the file, or the file ends in zeros from a sector inside it, as unwritten blocks read
        /// after a power cut) rather than bytes changed after they were written.
        var looksTorn: Bool
        /// The next valid record after it in the same segment, if any: where reading can go on.
        var resumesAt: (offset: Int64, position: UInt64)?

        static func == (lhs: BadRecord, rhs: BadRecord) -> Bool {
            lhs.offset == rhs.offset && lhs.position == rhs.position && lhs.reason == rhs.reason
                && lhs.looksTorn == rhs.looksTorn && lhs.resumesAt?.offset == rhs.resumesAt?.offset
                && lhs.resumesAt?.position == rhs.resumesAt?.position
        }
    }

    struct Result {
        /// The last valid position before the end or the bad record (first position - 1 if none).
        var head: UInt64
        var lastRecord: LogRecord?
        /// Where the valid records end: the end of the file, or the bad record's offset.
        var validEnd: Int64
        var fileSize: Int64
        var bad: BadRecord?
        /// The index entries a writer with `indexInterval` would have written for the valid records.
        var indexEntries: [SparseIndex.Entry] = []
    }

    let segment: SegmentFile
    let file: PosixFile
    /// Where its first record starts: its header's size (``SegmentFile/Header/size``).
    let recordsStart: Int64

    init(segment: SegmentFile, file: PosixFile, header: SegmentFile.Header) {
        self.segment = segment
        self.file = file
        recordsStart = Int64(header.size)
    }

    /// A scanner of a segment whose header is damaged: its records are looked for where the
    /// header Bureau writes ends, or where the first layout's ended if the segment's first record
    /// is found there (a segment from before the recovery point, whose header went bad).
    init(segment: SegmentFile, damagedHeaderFile file: PosixFile) {
        self.segment = segment
        self.file = file
        let first = Int64(SegmentFile.firstLayoutHeaderSize)
        if case .record(let record, _)? = try? Self.readRecord(file, at: first),
            record.position == segment.firstPosition
        {
            recordsStart = first
        } else {
            recordsStart = Int64(SegmentFile.headerSize)
        }
    }

    /// Scans from the header's end (or `offset`, where a record with position `expecting`
    /// starts) to the first bad record or the end of the file.
    ///
    /// - Parameters:
    ///   - indexInterval: if given, the index entries a writer would have made are collected.
    ///   - resync: whether to look for the next valid record after a bad one (for reports).
    ///   - visit: called with each valid record and its offset.
    func scan(
        from offset: Int64? = nil, expecting position: UInt64? = nil, indexInterval: Int64? = nil,
        resync: Bool = true, visit: (LogRecord, Int64) throws -> Void = { _, _ in }
    ) throws -> Result {
        let fileSize = try file.size
        let start = offset ?? recordsStart
        var expected = position ?? segment.firstPosition
        var result = Result(head: expected - 1, lastRecord: nil, validEnd: min(start, fileSize), fileSize: fileSize)
        var lastIndexed = recordsStart
        var buffer: [UInt8] = []
        var bufferOffset = start
        var cursor = 0
        while true {
            let parsed = buffer.withUnsafeBytes { RecordFormat.parse(UnsafeRawBufferPointer(rebasing: $0[cursor...])) }
            switch parsed {
            case .record(let record, let size):
                let offset = bufferOffset + Int64(cursor)
                guard record.position == expected else {
                    result.bad = try badRecord(
                        at: offset, expected: expected, fileSize: fileSize,
                        reason: "found position \(record.position) where \(expected) should be", resync: resync)
                    // A record whose checksum holds is not torn, wherever it is.
                    result.bad?.looksTorn = false
                    return result
                }
                if let indexInterval, offset - lastIndexed >= indexInterval {
                    result.indexEntries.append(.init(position: record.position, offset: offset))
                    lastIndexed = offset
                }
                try visit(record, offset)
                result.head = record.position
                result.lastRecord = record
                cursor += size
                result.validEnd = bufferOffset + Int64(cursor)
                expected += 1
            case .incomplete(let needed):
                let available = buffer.count - cursor
                let fileOffset = bufferOffset + Int64(buffer.count)
                if fileOffset >= fileSize {
                    if available > 0 {
                        // Torn, unless only its length was damaged (the rest of the file is the record).
                        result.bad = BadRecord(
                            offset: result.validEnd, position: expected,
                            reason: "incomplete record: \(available) byte(s) at the end of the file",
                            looksTorn: try looksTorn(at: result.validEnd, fileSize: fileSize), resumesAt: nil)
                    }
                    return result
                }
                buffer.removeSubrange(0..<cursor)
                bufferOffset += Int64(cursor)
                cursor = 0
                // A mebibyte at a time, or what the record needs, but never more than the file
                // still holds: a read's buffer is allocated and zeroed whole, most segments scanned
                // end well short of a mebibyte, and a damaged length may claim 16 MiB. A record
                // that needs more than is left is found incomplete at the end of the file.
                let wanted = min(max(needed - available, 1 << 20), Int(clamping: fileSize - fileOffset))
                let chunk = try file.read(count: wanted, at: fileOffset)
                if chunk.isEmpty { return result }
                buffer += chunk
            case .invalid(let reason, _):
                result.bad = try badRecord(
                    at: bufferOffset + Int64(cursor), expected: expected, fileSize: fileSize, reason: reason,
                    resync: resync)
                return result
            }
        }
    }

    private func badRecord(
        at offset: Int64, expected: UInt64, fileSize: Int64, reason: String, resync: Bool
    ) throws
        -> BadRecord
    {
        BadRecord(
            offset: offset, position: expected, reason: reason,
            looksTorn: try looksTorn(at: offset, fileSize: fileSize),
            resumesAt: resync ? try nextValidRecord(after: offset, expecting: expected, fileSize: fileSize) : nil)
    }

    /// Whether the bad record at `offset` looks like a write that never completed: it runs
    /// past the end of the file, or the file ends in zeros from a sector boundary inside it (or
    /// from its first byte): the blocks of the last append that never reached the disk, as a
    /// power cut leaves them.
    ///
    /// Nothing else is taken for torn: a record whose length was damaged (the rest of the file,
    /// taken as its body, makes its checksum hold), nor one with zeros followed by written bytes,
    /// which an acknowledged record that later went bad can hold as well (its payload may hold
    /// a sector of zeros; a disk may lose one). Only the last append, never acknowledged, may be
    /// cut, and only bytes that no later write reached can tell it.
    func looksTorn(at offset: Int64, fileSize: Int64) throws -> Bool {
        let header = try file.read(count: RecordFormat.headerSize, at: offset)
        guard header.count == RecordFormat.headerSize else { return true }
        let length = header.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: 0, as: UInt32.self).littleEndian) }
        let end: Int64
        if length <= RecordFormat.maxBodySize {
            end = offset + Int64(RecordFormat.headerSize + length)
            if end > fileSize { return try !isCompleteWithDamagedLength(at: offset, fileSize: fileSize) }
        } else {
            end = min(fileSize, offset + Int64(RecordFormat.headerSize + RecordFormat.maxBodySize))
        }
        let zeros = try zeroTailStart(from: offset, fileSize: fileSize)
        if zeros <= offset { return true }
        let sector: Int64 = 512
        let boundary = (zeros + sector - 1) / sector * sector
        return boundary < end
    }

    /// Where the run of zeros that ends the file starts, looking no further back than `offset`
    /// (`offset` itself when every byte from it on is zero; `fileSize` when the last byte is not).
    private func zeroTailStart(from offset: Int64, fileSize: Int64) throws -> Int64 {
        let chunkSize: Int64 = 1 << 20
        var chunkEnd = fileSize
        while chunkEnd > offset {
            let chunkStart = max(offset, chunkEnd - chunkSize)
            let bytes = try file.read(count: Int(chunkEnd - chunkStart), at: chunkStart)
            if let last = bytes.lastIndex(where: { $0 != 0 }) { return chunkStart + Int64(last) + 1 }
            chunkEnd = chunkStart
        }
        return offset
    }

    /// Whether the record at `offset`, with its length field replaced by what the rest of the
    /// file holds, has a checksum that holds: a complete record whose length was damaged.
    private func isCompleteWithDamagedLength(at offset: Int64, fileSize: Int64) throws -> Bool {
        let body = fileSize - offset - Int64(RecordFormat.headerSize)
        guard body >= 0, body <= Int64(RecordFormat.maxBodySize) else { return false }
        var bytes = try file.read(count: Int(fileSize - offset), at: offset)
        guard bytes.count == Int(fileSize - offset) else { return false }
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: UInt32(body).littleEndian, toByteOffset: 0, as: UInt32.self) }
        guard case .record = bytes.withUnsafeBytes({ RecordFormat.locate($0) }) else { return false }
        return true
    }

    /// The records framed in the bytes of a bad record, up to `end` (the next valid record,
    /// or the end of the segment): what those bytes may have held, for a repair to put a
    /// placeholder in every position among them.
    struct Framed {
        /// The last position the bytes may have held (at least the bad record's own).
        var lastPosition: UInt64
        /// The id each record's header carries, for the positions whose header is where the
        /// framing puts it and names the position expected there.
        var ids: [UInt64: EventID]
    }

    /// Walks the bad bytes from `bad.offset` to `end` by the records' length fields, and looks
    /// for headers that name a later position (a record whose header holds and whose body is
    /// damaged): the last position found is the last one the bytes may have held.
    func framedRecords(at bad: BadRecord, end: Int64) throws -> Framed {
        var framed = Framed(lastPosition: bad.position, ids: [:])
        var offset = bad.offset
        var expected = bad.position
        while offset + Int64(RecordFormat.headerSize) <= end {
            let header = try file.read(count: RecordFormat.headerSize, at: offset)
            guard header.count == RecordFormat.headerSize else { break }
            let (length, position) = header.withUnsafeBytes {
                (
                    Int($0.loadUnaligned(fromByteOffset: 0, as: UInt32.self).littleEndian),
                    $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian
                )
            }
            if position == expected,
                let id = header.withUnsafeBytes({ EventID(bytes: UnsafeRawBufferPointer(rebasing: $0[16..<32])) })
            {
                framed.ids[expected] = id
            }
            framed.lastPosition = max(framed.lastPosition, expected)
            let next = offset + Int64(RecordFormat.headerSize + length)
            guard length <= RecordFormat.maxBodySize, next <= end else { break }
            offset = next
            expected += 1
        }
        // Framed to the end: the records are counted.
        if offset == end { return framed }
        // The framing broke: headers further on may still name their positions.
        let limit = (end - bad.offset) / Int64(RecordFormat.headerSize)
        let chunkSize = 1 << 20
        var chunkStart = bad.offset + 1
        while chunkStart + Int64(RecordFormat.headerSize) <= end {
            let chunk = try file.read(
                count: min(chunkSize + RecordFormat.headerSize, Int(end - chunkStart)), at: chunkStart)
            guard chunk.count >= RecordFormat.headerSize else { break }
            chunk.withUnsafeBytes { raw in
                for index in 0...(raw.count - RecordFormat.headerSize) where index < chunkSize {
                    let length = Int64(raw.loadUnaligned(fromByteOffset: index, as: UInt32.self).littleEndian)
                    let position = raw.loadUnaligned(fromByteOffset: index + 8, as: UInt64.self).littleEndian
                    let start = chunkStart + Int64(index)
                    if position > framed.lastPosition, position - bad.position <= UInt64(limit),
                        start + Int64(RecordFormat.headerSize) + length <= end
                    {
                        framed.lastPosition = position
                    }
                }
            }
            chunkStart += Int64(chunkSize)
        }
        return framed
    }

    /// The last position owed a placeholder for `bad`, a bad record with `fileSize` bytes in
    /// its segment: every position from `bad.position` to it may have held an acknowledged
    /// event (`bad.position - 1` when none did).
    ///
    /// Up to the next valid record, or to the next segment, every position is lost. At the end
    /// of the newest segment only a torn write past the recovery point may be cut (it was the
    /// last append, whose `fdatasync` never finished, so it was never acknowledged); anything
    /// else holds as many positions as the records framed in its bytes, and at least every
    /// position up to the recovery point, whatever state the recovery point is in.
    func lastPositionLost(
        at bad: BadRecord, fileSize: Int64, nextSegment: UInt64?, acknowledged: UInt64
    ) throws -> UInt64 {
        if let resume = bad.resumesAt { return resume.position - 1 }
        if let nextSegment { return max(nextSegment - 1, bad.position - 1) }
        let framed = bad.looksTorn ? bad.position - 1 : try framedRecords(at: bad, end: fileSize).lastPosition
        return max(acknowledged, framed)
    }

    /// The first offset after `offset` where a valid record with a position at or after
    /// `expecting` starts, and its position; nil if there is none in the segment.
    func nextValidRecord(
        after offset: Int64, expecting: UInt64, fileSize: Int64
    ) throws -> (
        offset: Int64, position: UInt64
    )? {
        let chunkSize = 1 << 20
        var chunkStart = offset + 1
        while chunkStart + Int64(RecordFormat.headerSize) <= fileSize {
            let chunk = try file.read(count: chunkSize + RecordFormat.headerSize, at: chunkStart)
            guard chunk.count >= RecordFormat.headerSize else { return nil }
            let candidates = chunk.withUnsafeBytes { raw -> [Int] in
                var found: [Int] = []
                for index in 0...(raw.count - RecordFormat.headerSize) where index < chunkSize {
                    let length = Int(raw.loadUnaligned(fromByteOffset: index, as: UInt32.self).littleEndian)
                    let position = raw.loadUnaligned(fromByteOffset: index + 8, as: UInt64.self).littleEndian
                    // Only a length that fits and a plausible position are worth a checksum.
                    if length <= RecordFormat.maxBodySize, position >= expecting, position - expecting < 1 << 32,
                        chunkStart + Int64(index + RecordFormat.headerSize + length) <= fileSize
                    {
                        found.append(index)
                    }
                }
                return found
            }
            for index in candidates {
                let candidate = chunkStart + Int64(index)
                if case .record(let record, _) = try Self.readRecord(file, at: candidate) {
                    return (candidate, record.position)
                }
            }
            chunkStart += Int64(chunkSize)
        }
        return nil
    }

    /// Parses the record at `offset`, reading exactly its bytes.
    static func readRecord(_ file: PosixFile, at offset: Int64) throws -> RecordFormat.Parsed {
        let header = try file.read(count: RecordFormat.headerSize, at: offset)
        guard header.count == RecordFormat.headerSize else { return .incomplete(needed: RecordFormat.headerSize) }
        let length = header.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: 0, as: UInt32.self).littleEndian) }
        guard length <= RecordFormat.maxBodySize else {
            return .invalid(reason: "length \(length) is over the limit of \(RecordFormat.maxBodySize)", position: nil)
        }
        let bytes = try file.read(count: RecordFormat.headerSize + length, at: offset)
        return bytes.withUnsafeBytes { RecordFormat.parse($0) }
    }
}
