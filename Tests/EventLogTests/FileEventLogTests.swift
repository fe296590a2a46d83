import EventLog
import Foundation
import TestSupport
import Testing

struct FileEventLogTests {
    static func records(_ positions: ClosedRange<UInt64>, size: Int = 40) -> [LogRecord] {
        positions.map { position in
            var body = Data("event \(position) ".utf8)
            body.append(Data(repeating: UInt8(truncatingIfNeeded: position), count: max(0, size - body.count)))
            return LogRecord(position: position, id: EventID.random(), body: body)
        }
    }

    static func smallSegments() -> FileEventLog.Options {
        var options = FileEventLog.Options()
        options.segmentSize = 4096
        options.indexInterval = 512
        return options
    }

    @Test func recordsSurviveReopening() throws {
        let directory = try TemporaryDirectory("log")
        let records = Self.records(1...100)
        do {
            let log = try FileEventLog(directory: directory.path, options: Self.smallSegments())
            try log.append(records)
            try log.close()
        }
        let log = try FileEventLog(directory: directory.path, options: Self.smallSegments())
        #expect(log.head == 100)
        #expect(log.recovery.truncatedSegment == nil)
        #expect(log.position(of: records[41].id) == 42)
        #expect(try log.makeReader().read(after: 0, through: 100, limit: 1000, maxBytes: 1 << 30) == records)
        try log.close()
    }

    @Test func segmentsRollAtTheConfiguredSize() throws {
        let directory = try TemporaryDirectory("log")
        let log = try FileEventLog(directory: directory.path, options: Self.smallSegments())
        try log.append(Self.records(1...200))
        let segments = Files.list(directory.path).filter { $0.hasSuffix(".seg") }
        #expect(segments.count > 3)
        #expect(segments.allSatisfy { Files.size(directory.file($0)) <= 4096 })
        #expect(segments.first == "00000000000000000001.seg")
        try log.close()
    }

    @Test func aCursorFindsAnyPositionAcrossSegments() throws {
        let directory = try TemporaryDirectory("log")
        let log = try FileEventLog(directory: directory.path, options: Self.smallSegments())
        let records = Self.records(1...300)
        try log.append(records)
        for after in [0, 1, 57, 99, 100, 150, 299, 300] as [UInt64] {
            let cursor = try LogCursor(directory: directory.path, after: after)
            var read: [LogRecord] = []
            while let record = try cursor.next() { read.append(record) }
            #expect(read == Array(records[Int(after)...]), "reading after \(after)")
        }
        try log.close()
    }

    @Test func aSecondWriterIsRefusedAndTheHolderIsNamed() throws {
        let directory = try TemporaryDirectory("log")
        let log = try FileEventLog(directory: directory.path)
        #expect {
            _ = try FileEventLog(directory: directory.path)
        } throws: { error in
            guard case EventLogError.locked(_, let pid, _) = error else { return false }
            return pid == getpid() && "\(error)".contains("in use by process \(getpid())")
        }
        try log.close()
        // Released locks can be taken again.
        try FileEventLog(directory: directory.path).close()
    }

    @Test(arguments: 0..<12)
    func aTailCutAtARandomByteIsTruncatedAfterTheLastValidRecord(seed: Int) throws {
        var generator = SeededGenerator(seed: UInt64(seed))
        let directory = try TemporaryDirectory("log")
        let records = Self.records(1...120, size: 90)
        do {
            let log = try FileEventLog(directory: directory.path, options: Self.smallSegments())
            try log.append(records)
            try log.close()
        }
        let newest = try #require(Files.list(directory.path).filter { $0.hasSuffix(".seg") }.last)
        let path = directory.file(newest)
        let size = Files.size(path)
        let cut = Int64.random(in: 41..<size, using: &generator)
        try Files.truncate(path, to: cut)

        let log = try FileEventLog(directory: directory.path, options: Self.smallSegments())
        let report = log.recovery
        let survivors = try log.makeReader().read(after: 0, through: .max, limit: 1000, maxBytes: 1 << 30)
        #expect(survivors == Array(records.prefix(survivors.count)))
        #expect(log.head == UInt64(survivors.count))
        #expect(log.head < 120)
        #expect(report.droppedBytes == cut - Files.size(path))
        #expect(report.droppedBytes > 0 || cut == Files.size(path))
        try log.close()
        #expect(try LogVerifier.verify(directory: directory.path).ok)
    }

    @Test(arguments: 0..<8)
    func garbageOverTheLastBytesIsTruncated(seed: Int) throws {
        var generator = SeededGenerator(seed: UInt64(seed) + 100)
        let directory = try TemporaryDirectory("log")
        let records = Self.records(1...60, size: 70)
        do {
            let log = try FileEventLog(directory: directory.path, options: Self.smallSegments())
            try log.append(records)
            try log.close()
        }
        let newest = try #require(Files.list(directory.path).filter { $0.hasSuffix(".seg") }.last)
        let path = directory.file(newest)
        let garbage = (0..<Int.random(in: 1...150, using: &generator)).map { _ in
            UInt8.random(in: 0...255, using: &generator)
        }
        try Files.overwrite(path, at: max(40, Files.size(path) - Int64(garbage.count)), with: garbage)
        #expect(try !LogVerifier.verify(directory: directory.path).ok)

        let log = try FileEventLog(directory: directory.path, options: Self.smallSegments())
        #expect(log.recovery.truncatedSegment == newest)
        #expect(log.head < 60)
        let survivors = try log.makeReader().read(after: 0, through: .max, limit: 1000, maxBytes: 1 << 30)
        #expect(survivors == Array(records.prefix(Int(log.head))))
        // The log goes on from where it was cut.
        try log.append(Self.records((log.head + 1)...(log.head + 5)))
        try log.close()
        #expect(try LogVerifier.verify(directory: directory.path).ok)
    }

    @Test func recoveryReadsOnlyTheNewestSegmentsTail() throws {
        let directory = try TemporaryDirectory("log")
        var options = FileEventLog.Options()
        options.segmentSize = 64 << 10
        options.indexInterval = 4 << 10
        options.deduplicationWindow = 10
        var scanned: [Int64] = []
        var written: UInt64 = 0
        for round in 1...4 {
            let log = try FileEventLog(directory: directory.path, options: options)
            scanned.append(log.recovery.scannedBytes)
            let count = UInt64(round * 2000)
            try log.append(Self.records((written + 1)...(written + count), size: 100))
            written += count
            try log.close()
        }
        let log = try FileEventLog(directory: directory.path, options: options)
        scanned.append(log.recovery.scannedBytes)
        #expect(Files.list(directory.path).filter { $0.hasSuffix(".seg") }.count > 20)
        #expect(!log.recovery.listedDirectory, "HEAD named the newest segment")
        // Whatever the number of segments, only one index interval's worth of the tail is read.
        #expect(scanned.allSatisfy { $0 <= options.indexInterval + 200 }, "scanned \(scanned)")
        try log.close()
    }

    @Test func verifyNamesTheFirstBadPositionAndOffset() throws {
        let directory = try TemporaryDirectory("log")
        do {
            let log = try FileEventLog(directory: directory.path, options: Self.smallSegments())
            try log.append(Self.records(1...100))
            try log.close()
        }
        let first = try #require(Files.list(directory.path).first { $0.hasSuffix(".seg") })
        // Record 3 starts after the 40-byte header and two 72-byte records.
        let offset: Int64 = 40 + 72 * 2
        try Files.overwrite(directory.file(first), at: offset + 40, with: [0xFF, 0xFE])
        let report = try LogVerifier.verify(directory: directory.path)
        let problem = try #require(report.problem)
        #expect(problem.position == 3)
        #expect(problem.offset == offset)
        #expect(problem.segment.hasSuffix(first))
    }

    @Test func durabilityPoliciesParse() throws {
        #expect(try Durability(parsing: "always") == .always)
        #expect(try Durability(parsing: "never") == .never)
        #expect(try Durability(parsing: "interval=250") == .interval(milliseconds: 250))
        for bad in ["", "sometimes", "interval=", "interval=-5", "interval=abc"] {
            #expect(throws: EventLogError.badDurability(bad)) { try Durability(parsing: bad) }
        }
    }

    @Test func aReaderJumpsToPositionsInSegmentsCreatedAfterItWasMade() throws {
        let directory = try TemporaryDirectory("log")
        let log = try FileEventLog(directory: directory.path, options: Self.smallSegments())
        try log.append(Self.records(1...10))
        let reader = try log.makeReader()
        #expect(try reader.read(after: 0, through: 10, limit: 5, maxBytes: 1 << 20).map(\.position) == [1, 2, 3, 4, 5])
        try log.append(Self.records(11...400))
        // Far ahead, in a segment that did not exist when the reader last looked.
        #expect(
            try reader.read(after: 350, through: 400, limit: 3, maxBytes: 1 << 20).map(\.position) == [351, 352, 353])
        #expect(try reader.read(after: 20, through: 400, limit: 2, maxBytes: 1 << 20).map(\.position) == [21, 22])
        try log.close()
    }

    @Test func readersFollowAWriterAcrossSegments() throws {
        let directory = try TemporaryDirectory("log")
        let log = try FileEventLog(directory: directory.path, options: Self.smallSegments())
        let cursor = try LogCursor(directory: directory.path, after: 0)
        var seen: [UInt64] = []
        var written: UInt64 = 0
        for _ in 0..<20 {
            try log.append(Self.records((written + 1)...(written + 17)))
            written += 17
            while let record = try cursor.next() { seen.append(record.position) }
        }
        #expect(seen == Array(1...written))
        try log.close()
    }
}

/// A deterministic generator, so a failing case can be run again.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
