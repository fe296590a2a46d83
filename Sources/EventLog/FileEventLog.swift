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
/// Opening the log takes the directory's lock, checks the tail of the newest segment and
/// cuts it after the last valid record. Only the tail is checked, so opening takes the same
/// time whatever the log's size. Use it from one thread; readers on other threads use
/// ``makeReader()`` or ``LogCursor``.
public final class FileEventLog: EventLog {
    public struct Options: Sendable {
        public var durability: Durability = .always
        /// A new segment starts when the current one would grow past this many bytes.
        public var segmentSize: Int64 = 64 << 20
        /// A sparse index entry is written every this many bytes of a segment.
        public var indexInterval: Int64 = 64 << 10
        /// How many recent ids are remembered to recognise retried appends.
        public var deduplicationWindow: Int = 100_000

        public init() {}
    }

    public let directory: String
    public let options: Options
    /// What opening the log found and repaired.
    public let recovery: RecoveryReport
    public private(set) var head: UInt64
    public private(set) var lastRecord: LogRecord?

    private let lock: DirectoryLock
    private var segment: SegmentFile
    private var file: PosixFile
    private var size: Int64
    private var index: PosixFile
    private var indexSize: Int64
    private var lastIndexedOffset: Int64
    private var window: DeduplicationWindow
    private var unsynced = false
    private var lastSync = ContinuousClock.now
    private var writeBuffer: [UInt8] = []
    private var indexBuffer: [UInt8] = []
    private let logger: Logger

    /// Opens (creating if needed) the log in `directory`, recovering its tail.
    public init(directory: String, options: Options = Options(), logger: Logger = Logger(label: "bureau.log")) throws {
        self.directory = directory
        self.options = options
        self.logger = logger
        try PosixFile.makeDirectory(directory)
        lock = try DirectoryLock(directory: directory)

        // HEAD names the newest segment; listing the directory is the fallback, for a log
        // without HEAD or a crash between updating HEAD and creating the segment it names.
        var listed = false
        let newest: SegmentFile
        if let named = SegmentFile.newestFromHead(in: directory) {
            newest = named
        } else {
            listed = true
            let segments = try SegmentFile.list(in: directory)
            newest = segments.last ?? SegmentFile(directory: directory, firstPosition: 1)
            try SegmentFile.writeHead(newest)
            if segments.isEmpty {
                try FileEventLog.create(newest, previous: 0)
            }
        }
        var report = RecoveryReport(head: 0, newestSegment: newest.name, scannedBytes: 0)
        report.listedDirectory = listed
        segment = newest
        file = try PosixFile(path: newest.path, flags: O_RDWR)
        index = try PosixFile(path: newest.indexPath, flags: O_RDWR | O_CREAT)

        let tail = try FileEventLog.recoverTail(of: newest, file: file, index: index)
        head = tail.head
        lastRecord = tail.lastRecord
        size = tail.validEnd
        indexSize = tail.indexSize
        lastIndexedOffset = tail.lastIndexedOffset
        report.head = tail.head
        report.scannedBytes = tail.scannedBytes
        if tail.fileSize > tail.validEnd {
            try file.truncate(to: tail.validEnd)
            try file.dataSync()
            report.truncatedSegment = newest.name
            report.truncatedAt = tail.validEnd
            report.droppedBytes = tail.fileSize - tail.validEnd
            report.reason = tail.reason
        }
        recovery = report
        window = DeduplicationWindow(capacity: options.deduplicationWindow)
        try loadWindow()
        if report.truncatedSegment != nil {
            logger.warning("recovered the event log", metadata: ["report": "\(report)"])
        } else {
            logger.info("opened the event log", metadata: ["head": "\(head)", "newest segment": "\(newest.name)"])
        }
    }

    public func position(of id: EventID) -> UInt64? {
        window.position(of: id)
    }

    public func append(_ records: [LogRecord]) throws {
        guard !records.isEmpty else { return }
        writeBuffer.removeAll(keepingCapacity: true)
        indexBuffer.removeAll(keepingCapacity: true)
        var offset = size
        var expected = head + 1
        for record in records {
            guard record.position == expected else {
                throw EventLogError.positionOutOfOrder(expected: expected, got: record.position)
            }
            guard record.body.count <= RecordFormat.maxBodySize else {
                throw EventLogError.recordTooLarge(bytes: record.body.count, limit: RecordFormat.maxBodySize)
            }
            let recordSize = Int64(RecordFormat.size(ofBody: record.body.count))
            if offset + recordSize > options.segmentSize && offset > Int64(SegmentFile.headerSize) {
                try flushBuffers(endingAt: offset)
                try roll(startingAt: record.position)
                offset = size
            }
            if offset - lastIndexedOffset >= options.indexInterval {
                SparseIndex.encode(.init(position: record.position, offset: offset), into: &indexBuffer)
                lastIndexedOffset = offset
            }
            RecordFormat.append(position: record.position, id: record.id, body: record.body, to: &writeBuffer)
            offset += recordSize
            expected += 1
        }
        try flushBuffers(endingAt: offset)
        window.insert(records)
        head = expected - 1
        lastRecord = records.last
        unsynced = true
    }

    public func commit() throws {
        switch options.durability {
        case .always: try sync()
        case .interval: try syncIfDue()
        case .never: break
        }
    }

    public func syncIfDue() throws {
        guard unsynced, case .interval(let milliseconds) = options.durability else { return }
        if ContinuousClock.now - lastSync >= .milliseconds(milliseconds) {
            try sync()
        }
    }

    /// fdatasyncs the current segment now, whatever the policy.
    public func sync() throws {
        guard unsynced else { return }
        try file.dataSync()
        unsynced = false
        lastSync = .now
    }

    public func close() throws {
        try sync()
        file.close()
        index.close()
        lock.release()
    }

    public func makeReader() throws -> any EventLogReader {
        FileLogReader(directory: directory)
    }

    // MARK: Writing

    private func flushBuffers(endingAt offset: Int64) throws {
        if !writeBuffer.isEmpty {
            try writeBuffer.withUnsafeBytes { try file.write($0, at: size) }
            size = offset
            writeBuffer.removeAll(keepingCapacity: true)
        }
        if !indexBuffer.isEmpty {
            try indexBuffer.withUnsafeBytes { try index.write($0, at: indexSize) }
            indexSize += Int64(indexBuffer.count)
            indexBuffer.removeAll(keepingCapacity: true)
        }
    }

    /// Finishes the current segment and starts one whose first record is `position`.
    private func roll(startingAt position: UInt64) throws {
        if options.durability != .never {
            try file.dataSync()
        }
        let next = SegmentFile(directory: directory, firstPosition: position)
        // HEAD first: a crash before the segment exists leaves HEAD naming a missing file,
        // which opening notices; the other order could leave a newer segment HEAD ignores.
        try SegmentFile.writeHead(next)
        try FileEventLog.create(next, previous: segment.firstPosition)
        file.close()
        index.close()
        segment = next
        file = try PosixFile(path: next.path, flags: O_RDWR)
        index = try PosixFile(path: next.indexPath, flags: O_RDWR | O_CREAT)
        size = Int64(SegmentFile.headerSize)
        indexSize = 0
        lastIndexedOffset = size
        logger.debug("started a new segment", metadata: ["segment": "\(next.name)"])
    }

    /// Creates a segment with its header, durably: a crash leaves it whole or absent.
    private static func create(_ segment: SegmentFile, previous: UInt64) throws {
        let temporary = segment.path + ".new"
        let file = try PosixFile(path: temporary, flags: O_RDWR | O_CREAT | O_TRUNC)
        try SegmentFile.header(firstPosition: segment.firstPosition, previousFirstPosition: previous)
            .withUnsafeBytes { try file.write($0, at: 0) }
        try file.dataSync()
        file.close()
        guard rename(temporary, segment.path) == 0 else {
            throw EventLogError.io(operation: "rename", path: temporary, errno: errno)
        }
        try PosixFile.syncDirectory(segment.directory)
    }

    // MARK: Recovery

    struct Tail {
        var head: UInt64
        var lastRecord: LogRecord?
        var validEnd: Int64
        var fileSize: Int64
        var scannedBytes: Int64
        var indexSize: Int64
        var lastIndexedOffset: Int64
        var reason: String?
    }

    /// Finds the last valid record of the newest segment, starting from its last index entry
    /// that points at a valid record, so only the segment's tail is read.
    static func recoverTail(of segment: SegmentFile, file: PosixFile, index: PosixFile) throws -> Tail {
        let fileSize = try file.size
        let header = try file.read(count: SegmentFile.headerSize, at: 0)
        if let problem = segment.problem(withHeader: header) {
            throw EventLogError.badSegmentHeader(segment: segment.path, reason: problem)
        }
        var entries = SparseIndex.read(segment.indexPath)
        var start: (offset: Int64, position: UInt64) = (Int64(SegmentFile.headerSize), segment.firstPosition)
        var usable = 0
        for (number, entry) in entries.enumerated().reversed() {
            if entry.offset >= Int64(SegmentFile.headerSize), entry.offset < fileSize,
                case .record(let record, _)? = try? readRecord(file, at: entry.offset),
                record.position == entry.position
            {
                start = (entry.offset, entry.position)
                usable = number + 1
                break
            }
        }
        entries.removeSubrange(usable...)
        // Scan forward from there, record by record, in large reads.
        var tail = Tail(
            head: start.position - 1, lastRecord: nil, validEnd: start.offset, fileSize: fileSize,
            scannedBytes: fileSize - start.offset, indexSize: Int64(usable * SparseIndex.entrySize),
            lastIndexedOffset: entries.last?.offset ?? Int64(SegmentFile.headerSize))
        var buffer: [UInt8] = []
        var bufferOffset = start.offset
        var cursor = 0
        var expected = start.position
        scanning: while true {
            let parsed = buffer.withUnsafeBytes { RecordFormat.parse(UnsafeRawBufferPointer(rebasing: $0[cursor...])) }
            switch parsed {
            case .record(let record, let size):
                guard record.position == expected else {
                    tail.reason = "found position \(record.position) where \(expected) should be"
                    break scanning
                }
                tail.head = record.position
                tail.lastRecord = record
                cursor += size
                tail.validEnd = bufferOffset + Int64(cursor)
                expected += 1
            case .incomplete(let needed):
                let available = buffer.count - cursor
                let fileOffset = bufferOffset + Int64(buffer.count)
                if fileOffset >= fileSize {
                    if available > 0 { tail.reason = "incomplete record" }
                    break scanning
                }
                buffer.removeSubrange(0..<cursor)
                bufferOffset += Int64(cursor)
                cursor = 0
                let chunk = try file.read(count: max(needed - available, 1 << 20), at: fileOffset)
                if chunk.isEmpty { break scanning }
                buffer += chunk
            case .invalid(let reason, _):
                tail.reason = reason
                break scanning
            }
        }
        // Drop index entries past the cut, so that the index never points beyond the data.
        let keptEntries = entries.prefix { $0.offset < tail.validEnd }
        let indexFileSize = try index.size
        if keptEntries.count < entries.count || indexFileSize != tail.indexSize {
            tail.indexSize = Int64(keptEntries.count * SparseIndex.entrySize)
            try index.truncate(to: tail.indexSize)
            tail.lastIndexedOffset = keptEntries.last?.offset ?? Int64(SegmentFile.headerSize)
        }
        return tail
    }

    static func readRecord(_ file: PosixFile, at offset: Int64) throws -> RecordFormat.Parsed {
        let header = try file.read(count: RecordFormat.headerSize, at: offset)
        guard header.count == RecordFormat.headerSize else { return .incomplete(needed: RecordFormat.headerSize) }
        let length = header.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: 0, as: UInt32.self).littleEndian) }
        guard length <= RecordFormat.maxBodySize else {
            return .invalid(reason: "length over the limit", position: nil)
        }
        let bytes = try file.read(count: RecordFormat.headerSize + length, at: offset)
        return bytes.withUnsafeBytes { RecordFormat.parse($0) }
    }

    /// Remembers the ids of the last records, reading only as many as the window holds and
    /// finding older segments through the headers' links rather than a directory listing.
    private func loadWindow() throws {
        guard head > 0 else { return }
        let from = head > UInt64(window.capacity) ? head - UInt64(window.capacity) : 0
        var segments = [segment]
        while let oldest = segments.first, oldest.firstPosition > from + 1 {
            let previous = try oldest.previousFirstPosition()
            guard previous > 0 else { break }
            segments.insert(SegmentFile(directory: directory, firstPosition: previous), at: 0)
        }
        let cursor = try LogCursor(directory: directory, segments: segments, after: from, limit: head)
        while let record = try cursor.next() {
            window.insert(record.id, at: record.position)
        }
    }
}
