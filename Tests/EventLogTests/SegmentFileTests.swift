import EventLog
import Foundation
import Guards
import TestSupport
import Testing

/// The log's on-disk formats: every layout main has written opens, appends and reads back
/// under this build, and a segment of a later format version is refused, named, never taken
/// for damage.
// Writes and syncs files: on threads of its own, off the cooperative pool.
@Suite(.ownThreads)
struct SegmentFileTests {
    static let histories = "/" + #filePath.split(separator: "/").dropLast(2).joined(separator: "/") + "/Histories"

    static func smallSegments() -> FileEventLog.Options {
        var options = FileEventLog.Options()
        options.segmentSize = 4096
        options.indexInterval = 512
        return options
    }

    /// A copy of a recorded history's log, to open and write: the history itself is never written.
    static func copy(history name: String, into directory: TemporaryDirectory) throws -> String {
        let log = directory.file("log")
        try FileManager.default.copyItem(atPath: histories + "/" + name + "/log", toPath: log)
        return log
    }

    static func segments(in directory: String) -> [String] {
        Files.list(directory).filter { $0.hasSuffix(".seg") }.sorted().map { directory + "/" + $0 }
    }

    static func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    /// Whether the segment at `path` has the first layout's header: 32 bytes, its checksum
    /// (over bytes 0..<24) at byte 24.
    static func hasFirstLayout(_ path: String) throws -> Bool {
        let header = try bytes(path).prefix(32)
        let crc = Array(header.prefix(24)).withUnsafeBytes { Checksum.crc32($0) }
        return header.count == 32 && Array(header[24..<28]) == withUnsafeBytes(of: crc.littleEndian, Array.init)
    }

    /// Rewrites a segment this build wrote into the first layout, as the builds before 0ffe744
    /// wrote it (`git show f434b3e:Sources/EventLog/SegmentFile.swift`): the same records after a
    /// 32-byte header, bytes 0..<24 as today (magic, version 1, reserved zero, first position), the
    /// CRC-32 of those at 24, zero at 28. Nothing else differs; the history
    /// 2026-11-22-first-format is a log the build of 3f1b7d0 wrote itself.
    static func rewriteInTheFirstLayout(_ path: String) throws {
        let bytes = try bytes(path)
        let start = Array(bytes[0..<24])
        let crc = start.withUnsafeBytes { Checksum.crc32($0) }
        let header = start + withUnsafeBytes(of: crc.littleEndian, Array.init) + [0, 0, 0, 0]
        try Data(header + bytes[40...]).write(to: URL(fileURLWithPath: path))
    }

    @Test func aLogTheBuildOf3f1b7d0WroteInTheFirstLayoutOpensTakesAppendsAndReadsBack() throws {
        let directory = try TemporaryDirectory("first-format")
        let log = try Self.copy(history: "2026-11-22-first-format", into: directory)
        let first = try #require(Self.segments(in: log).first)
        try #require(try Self.hasFirstLayout(first), "the history's segment is not in the first layout")
        // Read as it is, by a reader: nothing is written.
        let reader = try LogCursor(directory: log, after: 0)
        var recorded: [LogRecord] = []
        while let record = try reader.next() { recorded.append(record) }
        #expect(recorded.map(\.position) == Array(1...17))
        // Opened by today's writer: it goes on in the old segment, then rolls to a linked one.
        let appended = FileEventLogTests.records(18...150)
        do {
            let writer = try FileEventLog(directory: log, options: Self.smallSegments())
            #expect(writer.head == 17)
            #expect(writer.position(of: recorded[4].id) == 5, "the ids of the old segment are remembered")
            for start in stride(from: 0, to: appended.count, by: 7) {
                try writer.append(Array(appended[start..<min(start + 7, appended.count)]))
                try writer.commit()
            }
            try writer.close()
        }
        let segments = Self.segments(in: log)
        #expect(segments.count > 1)
        #expect(try Self.hasFirstLayout(first), "the old segment keeps its header")
        #expect(try !Self.hasFirstLayout(segments[1]))
        let reopened = try FileEventLog(directory: log, options: Self.smallSegments())
        #expect(reopened.head == 150)
        #expect(reopened.position(of: recorded[2].id) == 3, "walked back to the first-layout segment")
        #expect(reopened.position(of: appended[0].id) == 18)
        let all = try reopened.makeReader().read(after: 0, through: 150, limit: 1000, maxBytes: 1 << 30)
        #expect(all == recorded + appended)
        // A cursor placed in the old segment reads on from there.
        let cursor = try LogCursor(directory: log, after: 10)
        #expect(try cursor.next()?.position == 11)
        try reopened.close()
        let report = try LogVerifier.verify(directory: log)
        #expect(report.ok, "\(report.problems)")
        #expect(report.records == 150)
    }

    @Test func aLogOfSeveralFirstLayoutSegmentsOpensAndItsIndexesAreCheckedNotTrusted() throws {
        let directory = try TemporaryDirectory("first-format-segments")
        let records = FileEventLogTests.records(1...200)
        do {
            let log = try FileEventLog(directory: directory.path, options: Self.smallSegments())
            for start in stride(from: 0, to: 200, by: 10) {
                try log.append(Array(records[start..<start + 10]))
                try log.commit()
            }
            try log.close()
        }
        // As the first layout's builds left a log: no recovery point, every header 32 bytes (the
        // indexes, now 8 bytes off, are left: readers must check them).
        try FileManager.default.removeItem(atPath: directory.file("recovery-point"))
        let segments = Self.segments(in: directory.path)
        try #require(segments.count > 3)
        for segment in segments { try Self.rewriteInTheFirstLayout(segment) }

        let log = try FileEventLog(directory: directory.path, options: Self.smallSegments())
        #expect(log.head == 200)
        #expect(log.position(of: records[3].id) == 4, "walked back through the segments without links")
        #expect(try log.makeReader().read(after: 0, through: 200, limit: 1000, maxBytes: 1 << 30) == records)
        for after: UInt64 in [37, 120, 199] {
            let cursor = try LogCursor(directory: directory.path, after: after)
            #expect(try cursor.next() == records[Int(after)], "read on after \(after)")
        }
        try log.append(FileEventLogTests.records(201...201))
        try log.close()
        #expect(try Self.hasFirstLayout(segments.last ?? ""), "appended to in its own layout")
        let report = try LogVerifier.verify(directory: directory.path)
        #expect(report.problems.isEmpty && report.unsupported.isEmpty, "\(report.problems)")
        #expect(report.records == 201)
        let repair = try LogRepair.repair(directory: directory.path, dryRun: true) { _ in (.random(), Data()) }
        #expect(repair.rewritten.isEmpty, "nothing of the old layout is damage")
    }

    /// A first-layout segment whose header went bad: its records start at byte 32, not 40, and a
    /// repair keeps the first of them rather than taking it for damage.
    @Test func aRepairOfAFirstLayoutSegmentWithADamagedHeaderKeepsItsFirstRecord() throws {
        let directory = try TemporaryDirectory("first-format-damaged-header")
        let records = FileEventLogTests.records(1...60)
        do {
            let log = try FileEventLog(directory: directory.path, options: Self.smallSegments())
            for start in stride(from: 0, to: 60, by: 10) {
                try log.append(Array(records[start..<start + 10]))
                try log.commit()
            }
            try log.close()
        }
        try FileManager.default.removeItem(atPath: directory.file("recovery-point"))
        let segments = Self.segments(in: directory.path)
        try #require(segments.count > 1)
        for segment in segments { try Self.rewriteInTheFirstLayout(segment) }
        // The first segment's header checksum no longer holds (a bit of its magic flipped).
        try Files.overwrite(segments[0], at: 0, with: [UInt8(ascii: "C")])

        let verified = try LogVerifier.verify(directory: directory.path)
        #expect(!verified.ok, "a bad header is damage")
        let repair = try LogRepair.repair(directory: directory.path) { _ in (.random(), Data()) }
        #expect(repair.lost.isEmpty, "every record of the segment is intact: \(repair)")
        let log = try FileEventLog(directory: directory.path, options: Self.smallSegments())
        #expect(try log.makeReader().read(after: 0, through: 60, limit: 1000, maxBytes: 1 << 30) == records)
        try log.close()
    }

    @Test func aLogThatNamesItsNewestSegmentInHEADOpensAndGetsARecoveryPoint() throws {
        let directory = try TemporaryDirectory("head-file")
        let log = try Self.copy(history: "2026-11-22-head-file", into: directory)
        try #require(FileManager.default.fileExists(atPath: log + "/HEAD"))
        try #require(!FileManager.default.fileExists(atPath: log + "/recovery-point"))
        do {
            let writer = try FileEventLog(directory: log)
            #expect(writer.head == 57)
            try writer.append(FileEventLogTests.records(58...60))
            try writer.commit()
            try writer.close()
        }
        #expect(!FileManager.default.fileExists(atPath: log + "/HEAD"), "HEAD is stale once a recovery point is kept")
        #expect(FileManager.default.fileExists(atPath: log + "/recovery-point"))
        let reopened = try FileEventLog(directory: log)
        #expect(reopened.head == 60)
        #expect(reopened.recovery.listedDirectory == false, "the recovery point names the newest segment now")
        try reopened.close()
    }

    /// Gives the segment at `path` the header a later Bureau, of format version 2, would write:
    /// today's layout with version 2 and its own checksum (what a version 2 holds beyond that,
    /// nobody knows yet; a version-1 header with only its version changed reads as damaged).
    static func writeALaterVersion(_ path: String) throws {
        var header = Array(try bytes(path).prefix(40))
        header.replaceSubrange(8..<12, with: [2, 0, 0, 0])
        let crc = Array(header[0..<32]).withUnsafeBytes { Checksum.crc32($0) }
        header.replaceSubrange(32..<36, with: withUnsafeBytes(of: crc.littleEndian, Array.init))
        try Files.overwrite(path, at: 0, with: header)
    }

    /// Writes records over several segments and makes the segment at `index` (from the oldest)
    /// one a later Bureau wrote (``writeALaterVersion(_:)``).
    static func logWithALaterSegment(at index: Int, in directory: TemporaryDirectory) throws -> String {
        let log = try FileEventLog(directory: directory.path, options: smallSegments())
        let records = FileEventLogTests.records(1...120)
        for start in stride(from: 0, to: 120, by: 10) {
            try log.append(Array(records[start..<start + 10]))
            try log.commit()
        }
        try log.close()
        let segments = Self.segments(in: directory.path)
        let segment = segments[index < 0 ? segments.count + index : index]
        try writeALaterVersion(segment)
        return segment
    }

    @Test func aNewestSegmentOfALaterFormatVersionIsRefusedByTheWriterNamingTheFileAndTheVersion() throws {
        let directory = try TemporaryDirectory("later-format")
        let segment = try Self.logWithALaterSegment(at: -1, in: directory)
        let before = try Self.bytes(segment)
        let refusal = EventLogError.unsupportedFormat(segment: segment, version: 2)
        #expect(throws: refusal) { try FileEventLog(directory: directory.path, options: Self.smallSegments()) }
        #expect(
            refusal.description.hasPrefix(
                "\(segment) is in log format version 2; this Bureau reads version 1: a later Bureau wrote it"))
        // Not damage: verify says what it is and reads the rest, and repair refuses to touch it.
        let report = try LogVerifier.verify(directory: directory.path)
        #expect(report.unsupported == [LogVerifier.UnsupportedSegment(segment: segment, version: 2)])
        #expect(report.problems.isEmpty, "\(report.problems)")
        #expect(!report.ok)
        #expect(throws: EventLogError.self) {
            try LogRepair.repair(directory: directory.path) { _ in (.random(), Data()) }
        }
        #expect(try Self.bytes(segment) == before, "nothing was changed")
    }

    @Test func aVersionWhoseBytesAreDamagedIsDamageNotALaterFormat() throws {
        let directory = try TemporaryDirectory("flipped-version")
        let log = try FileEventLog(directory: directory.path)
        try log.append(FileEventLogTests.records(1...3))
        try log.close()
        let segment = try #require(Self.segments(in: directory.path).first)
        try Files.overwrite(segment, at: 9, with: [0x40])
        #expect(throws: EventLogError.self) { try FileEventLog(directory: directory.path) }
        let report = try LogVerifier.verify(directory: directory.path)
        #expect(report.unsupported.isEmpty)
        #expect(report.problems.first?.reason.contains("the version is damaged") == true, "\(report.problems)")
    }

    @Test func anOlderSegmentOfALaterFormatVersionIsRefusedByReadersNamingTheFileAndTheVersion() throws {
        let directory = try TemporaryDirectory("later-format-reader")
        let segment = try Self.logWithALaterSegment(at: 1, in: directory)
        let cursor = try LogCursor(directory: directory.path, after: 0)
        #expect(throws: EventLogError.unsupportedFormat(segment: segment, version: 2)) {
            while try cursor.next() != nil {}
        }
    }
}
