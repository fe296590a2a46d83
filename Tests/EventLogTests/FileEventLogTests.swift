import EventLog
import Foundation
import Guards
import TestSupport
import Testing

// Writes, syncs and reads files without end: on threads of its own, off the cooperative pool.
@Suite(.ownThreads)
struct FileEventLogTests {
    static func records(_ positions: ClosedRange<UInt64>, size: Int = 40) -> [LogRecord] {
        positions.map { position in
            var body = Data("event \(position) ".utf8)
            body.append(Data(repeating: UInt8(truncatingIfNeeded: position), count: max(0, size - body.count)))
            return LogRecord(position: position, id: EventID.random(), body: body)
        }
    }

    /// Segments large enough that the tests' logs fit in one.
    static func oneSegment() -> FileEventLog.Options {
        var options = FileEventLog.Options()
        options.segmentSize = 1 << 20
        options.indexInterval = 512
        return options
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

    @Test func segmentsRollAtTheConfiguredSizeBetweenBatches() throws {
        let directory = try TemporaryDirectory("log")
        let log = try FileEventLog(directory: directory.path, options: Self.smallSegments())
        let records = Self.records(1...200)
        for start in stride(from: 0, to: 200, by: 5) {
            try log.append(Array(records[start..<start + 5]))
            try log.commit()
        }
        let segments = Files.list(directory.path).filter { $0.hasSuffix(".seg") }
        #expect(segments.count > 3)
        #expect(segments.allSatisfy { Files.size(directory.file($0)) <= 4096 })
        #expect(segments.first == "00000000000000000001.seg")
        try log.close()
    }

    @Test func aBatchIsNeverSplitAcrossSegments() throws {
        let directory = try TemporaryDirectory("log")
        let log = try FileEventLog(directory: directory.path, options: Self.smallSegments())
        try log.append(Self.records(1...10))
        try log.append(Self.records(11...110))
        try log.close()
        // The second batch (100 records of 72 bytes) is larger than a segment: it is one segment of its own.
        #expect(
            Files.list(directory.path).filter { $0.hasSuffix(".seg") } == [
                "00000000000000000001.seg", "00000000000000000011.seg",
            ])
        #expect(try LogVerifier.verify(directory: directory.path).ok)
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

    /// A log whose first `acknowledged` records were committed, then `more` appended and the
    /// writer dropped without closing, as a crash leaves it.
    static func crashedLog(
        acknowledged: UInt64, more: UInt64, size: Int = 90
    ) throws -> (TemporaryDirectory, [LogRecord]) {
        let directory = try TemporaryDirectory("log")
        let records = Self.records(1...(acknowledged + more), size: size)
        let log = try FileEventLog(directory: directory.path, options: Self.oneSegment())
        try log.append(Array(records[0..<Int(acknowledged)]))
        try log.commit()
        if more > 0 { try log.append(Array(records[Int(acknowledged)...])) }
        return (directory, records)
    }

    @Test(arguments: 0..<12)
    func aTornWriteBeyondTheRecoveryPointIsCutAfterTheLastValidRecord(seed: Int) throws {
        var generator = Xoshiro256(seed: UInt64(seed))
        let (directory, records) = try Self.crashedLog(acknowledged: 20, more: 20)
        let path = directory.file("00000000000000000001.seg")
        // Records 21…40 were never acknowledged: tear them at a random byte.
        let acknowledgedEnd = Int64(40 + 20 * 122)
        let cut = Int64.random(in: (acknowledgedEnd + 1)..<Files.size(path), using: &generator)
        try Files.truncate(path, to: cut)

        let log = try FileEventLog(directory: directory.path, options: Self.oneSegment())
        let survivors = try log.makeReader().read(after: 0, through: .max, limit: 1000, maxBytes: 1 << 30)
        #expect(survivors == Array(records.prefix(survivors.count)))
        #expect(log.head >= 20 && log.head < 40)
        #expect(log.recovery.acknowledged == 20)
        #expect(log.recovery.droppedBytes == cut - Files.size(path))
        // The log goes on from where it was cut, and the cut is not mistaken for damage later.
        try log.append(Self.records((log.head + 1)...(log.head + 5)))
        try log.commit()
        try log.close()
        #expect(try LogVerifier.verify(directory: directory.path).ok)
    }

    @Test(arguments: 0..<6)
    func aCutBelowTheRecoveryPointIsDamageAndTheLogRefusesToOpen(seed: Int) throws {
        var generator = Xoshiro256(seed: UInt64(seed) + 50)
        let (directory, _) = try Self.crashedLog(acknowledged: 30, more: 0)
        let path = directory.file("00000000000000000001.seg")
        let cut = Int64.random(in: 41..<Files.size(path), using: &generator)
        try Files.truncate(path, to: cut)
        let lostFrom = UInt64((cut - 40) / 122) + 1
        #expect {
            _ = try FileEventLog(directory: directory.path, options: Self.smallSegments())
        } throws: { error in
            guard case EventLogError.damaged(let damage) = error else { return false }
            return damage.firstPosition == lostFrom && damage.lastPosition == 30 && damage.segment == path
        }
        // Nothing was changed: the bytes are still there for a repair to move aside.
        #expect(Files.size(path) == cut)
        let report = try LogVerifier.verify(directory: directory.path)
        #expect(report.problems.map(\.firstPosition) == [lostFrom])
    }

    @Test(arguments: 0..<8)
    func garbageOverAcknowledgedRecordsIsDamageNotATornTail(seed: Int) throws {
        var generator = Xoshiro256(seed: UInt64(seed) + 100)
        let (directory, _) = try Self.crashedLog(acknowledged: 60, more: 0, size: 70)
        let newest = try #require(Files.list(directory.path).filter { $0.hasSuffix(".seg") }.last)
        let path = directory.file(newest)
        let garbage = (0..<Int.random(in: 1...150, using: &generator)).map { _ in
            UInt8.random(in: 1...255, using: &generator)
        }
        try Files.overwrite(path, at: max(40, Files.size(path) - Int64(garbage.count)), with: garbage)
        #expect(try !LogVerifier.verify(directory: directory.path).ok)
        #expect {
            _ = try FileEventLog(directory: directory.path, options: Self.smallSegments())
        } throws: { error in
            guard case EventLogError.damaged(let damage) = error else { return false }
            return damage.segment == path && (damage.lastPosition ?? 0) == 60
        }
    }

    @Test func zerosBeyondTheRecoveryPointAreATornWriteAndAreCut() throws {
        let (directory, _) = try Self.crashedLog(acknowledged: 10, more: 0)
        let path = directory.file("00000000000000000001.seg")
        let end = Files.size(path)
        // A power cut can leave a file longer than what was written, the rest reading as zeros.
        try Files.overwrite(path, at: end, with: [UInt8](repeating: 0, count: 700))
        let log = try FileEventLog(directory: directory.path, options: Self.smallSegments())
        #expect(log.head == 10)
        #expect(log.recovery.droppedBytes == 700)
        #expect(Files.size(path) == end)
        try log.close()
    }

    /// Record 11, past the recovery point and the last of the file, 4,032 bytes from offset
    /// 40,360 (a 40-byte header, then ten records of 4,032).
    static let lastRecordOffset: Int64 = 40 + 10 * 4032

    @Test func zerosFollowedByWrittenBytesInTheLastRecordAreDamageNotATornWrite() throws {
        let (directory, _) = try Self.crashedLog(acknowledged: 10, more: 1, size: 4000)
        let path = directory.file("00000000000000000001.seg")
        // A sector in its middle reads as zeros, its end as written: a disk that lost a sector
        // of a record that may have been acknowledged (the recovery point can be stale), not an
        // append that never finished.
        try Files.overwrite(path, at: 41_472, with: [UInt8](repeating: 0, count: 512))
        let size = Files.size(path)
        #expect {
            _ = try FileEventLog(directory: directory.path, options: Self.oneSegment())
        } throws: { error in
            guard case EventLogError.damaged(let damage) = error else { return false }
            return damage.firstPosition == 11 && damage.offset == Self.lastRecordOffset
        }
        #expect(Files.size(path) == size, "nothing was cut")
    }

    @Test func theFileEndingInZerosFromASectorInsideTheLastRecordIsATornWriteAndIsCut() throws {
        let (directory, _) = try Self.crashedLog(acknowledged: 10, more: 1, size: 4000)
        let path = directory.file("00000000000000000001.seg")
        let end = Files.size(path)
        // The append's last blocks never reached the disk.
        try Files.overwrite(path, at: 41_472, with: [UInt8](repeating: 0, count: Int(end - 41_472)))
        let log = try FileEventLog(directory: directory.path, options: Self.oneSegment())
        #expect(log.head == 10)
        #expect(log.recovery.droppedBytes == end - Self.lastRecordOffset)
        try log.close()
    }

    @Test func openingChecksOnlyTheNewestSegmentWhateverTheLogsSize() throws {
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
            for _ in 0..<(round * 20) {
                try log.append(Self.records((written + 1)...(written + 100), size: 100))
                try log.commit()
                written += 100
            }
            try log.close()
        }
        let log = try FileEventLog(directory: directory.path, options: options)
        scanned.append(log.recovery.scannedBytes)
        #expect(Files.list(directory.path).filter { $0.hasSuffix(".seg") }.count > 20)
        #expect(!log.recovery.listedDirectory, "the recovery point named the newest segment")
        // Whatever the number of segments, at most one segment is read.
        #expect(scanned.allSatisfy { $0 <= options.segmentSize }, "scanned \(scanned)")
        try log.close()
    }

    @Test func verifyNamesEveryBadRangeWithItsPositionsAndOffsets() throws {
        let directory = try TemporaryDirectory("log")
        do {
            let log = try FileEventLog(directory: directory.path, options: Self.smallSegments())
            for start in stride(from: UInt64(1), through: 100, by: 10) {
                try log.append(Self.records(start...(start + 9)))
                try log.commit()
            }
            try log.close()
        }
        let segments = Files.list(directory.path).filter { $0.hasSuffix(".seg") }
        // Record 3 starts after the 40-byte header and two 72-byte records; damage it and record 7.
        let offset: Int64 = 40 + 72 * 2
        try Files.overwrite(directory.file(segments[0]), at: offset + 40, with: [0xFF, 0xFE])
        try Files.overwrite(directory.file(segments[0]), at: offset + 4 * 72 + 40, with: [0xFF, 0xFE])
        let report = try LogVerifier.verify(directory: directory.path)
        #expect(report.problems.count == 2)
        #expect(report.problems.map(\.firstPosition) == [3, 7])
        #expect(report.problems.map(\.lastPosition) == [3, 7])
        #expect(report.problems.first?.offset == offset)
        #expect(report.problems.first?.segment.hasSuffix(segments[0]) == true)
        #expect(report.records == 98)
        // Readers stop at the first with an error naming it.
        let cursor = try LogCursor(directory: directory.path, after: 0)
        #expect {
            while try cursor.next() != nil {}
        } throws: { error in
            guard case EventLogError.corruptRecord(_, let at, let position, _) = error else { return false }
            return at == offset && position == 3
        }
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

    @Test func aCursorReadsBodiesIntoACallersBufferAsItReadsRecords() throws {
        let directory = try TemporaryDirectory("log")
        let log = try FileEventLog(directory: directory.path, options: Self.smallSegments())
        let written = Self.records(1...200)
        try log.append(written)
        try log.close()

        // Across several segments, into a buffer that must grow (it starts with room for 64 bytes).
        var reading = RecordBodies(capacity: 1)
        let cursor = try LogCursor(directory: directory.path, after: 0)
        var found: [(position: UInt64, id: EventID, body: Range<Int>)] = []
        while let record = try cursor.next(appendingBodyTo: &reading) { found.append(record) }
        let bodies = reading.data()
        let read = found.map { LogRecord(position: $0.position, id: $0.id, body: bodies[$0.body]) }

        #expect(read == written)
        #expect(bodies.count == written.reduce(0) { $0 + $1.body.count })
    }
}
