import EventLog
import Foundation
import TestSupport
import Testing

/// `bureau log repair`'s core: damage moved aside, positions kept contiguous, nothing deleted.
struct LogRepairTests {
    /// A placeholder whose body says which position it stands for.
    static func placeholder(_ lost: LogRepair.LostPosition) -> (EventID, Data) {
        (EventID(high: 1, low: lost.position), Data("lost \(lost.position)".utf8))
    }

    static func log(batches: Int, of size: UInt64 = 10) throws -> (TemporaryDirectory, [LogRecord]) {
        let directory = try TemporaryDirectory("log")
        let records = FileEventLogTests.records(1...(UInt64(batches) * size))
        let log = try FileEventLog(directory: directory.path, options: FileEventLogTests.smallSegments())
        for batch in 0..<batches {
            try log.append(Array(records[batch * Int(size)..<(batch + 1) * Int(size)]))
            try log.commit()
        }
        try log.close()
        return (directory, records)
    }

    @Test func damagedRecordsBecomePlaceholdersAndEverythingElseIsKeptAsItWas() throws {
        let (directory, records) = try Self.log(batches: 12)
        let segments = Files.list(directory.path).filter { $0.hasSuffix(".seg") }
        // Record 3 of the first segment, and the header of the second.
        try Files.overwrite(directory.file(segments[0]), at: 40 + 72 * 2 + 40, with: [0xAA])
        try Files.overwrite(directory.file(segments[1]), at: 3, with: [0x00])
        #expect(try LogVerifier.verify(directory: directory.path).problems.count == 2)
        let second = try #require(UInt64(segments[1].prefix(20)))

        let dry = try LogRepair.repair(directory: directory.path, dryRun: true, placeholder: Self.placeholder)
        #expect(dry.lost == [3...3])
        #expect(Files.list(directory.path).allSatisfy { !$0.hasPrefix("damaged-") }, "a dry run changes nothing")

        let report = try LogRepair.repair(directory: directory.path, placeholder: Self.placeholder)
        #expect(report.lost == [3...3])
        #expect(report.rewritten == [segments[0], segments[1]])
        #expect(report.head == 120)
        #expect(report.kept == 119)
        let damaged = try #require(report.damagedDirectory)
        #expect(Set(Files.list(damaged)).isSuperset(of: [segments[0], segments[1], "README"]))
        #expect(Files.read(damaged + "/README")?.contains("position 3") == true)

        let verified = try LogVerifier.verify(directory: directory.path)
        #expect(verified.ok, "\(verified.problems)")
        let read = try FileEventLogFaultTests.everything(in: directory.path)
        #expect(read.map(\.position) == Array(1...120))
        #expect(read[2].body == Data("lost 3".utf8))
        #expect(Array(read[0..<2]) == Array(records[0..<2]))
        #expect(Array(read[3...]) == Array(records[3...]))
        #expect(read.contains { $0.position == second })
        // The bus can open it again, and it goes on after the head.
        let log = try FileEventLog(directory: directory.path, options: FileEventLogTests.smallSegments())
        #expect(log.head == 120)
        try log.close()
    }

    @Test func aCutBelowTheRecoveryPointIsFilledUpToTheAcknowledgedPosition() throws {
        let (directory, records) = try Self.log(batches: 3)
        let newest = try #require(Files.list(directory.path).filter { $0.hasSuffix(".seg") }.last)
        try Files.truncate(directory.file(newest), to: Files.size(directory.file(newest)) - 100)
        #expect(throws: (any Error).self) {
            _ = try FileEventLog(directory: directory.path, options: FileEventLogTests.smallSegments())
        }
        let report = try LogRepair.repair(directory: directory.path, placeholder: Self.placeholder)
        #expect(report.lost == [29...30])
        let read = try FileEventLogFaultTests.everything(in: directory.path)
        #expect(read.map(\.position) == Array(1...30))
        #expect(Array(read.prefix(28)) == Array(records.prefix(28)))
        let log = try FileEventLog(directory: directory.path, options: FileEventLogTests.smallSegments())
        #expect(log.head == 30)
        try log.close()
    }

    @Test func aMissingSegmentIsFilledWithPlaceholders() throws {
        let (directory, _) = try Self.log(batches: 12)
        let segments = Files.list(directory.path).filter { $0.hasSuffix(".seg") }
        let missing = segments[1]
        unlink(directory.file(missing))
        let report = try LogRepair.repair(directory: directory.path, placeholder: Self.placeholder)
        let first = try #require(UInt64(missing.prefix(20)))
        let next = try #require(UInt64(segments[2].prefix(20)))
        #expect(report.lost == [first...(next - 1)])
        #expect(try LogVerifier.verify(directory: directory.path).ok)
        #expect(try FileEventLogFaultTests.everything(in: directory.path).map(\.position) == Array(1...120))
    }

    @Test func repairRefusesToRunBesideAWriter() throws {
        let directory = try TemporaryDirectory("log")
        let log = try FileEventLog(directory: directory.path)
        #expect(throws: (any Error).self) {
            _ = try LogRepair.repair(directory: directory.path, placeholder: Self.placeholder)
        }
        try log.close()
    }

    @Test func aSoundLogNeedsNoRepair() throws {
        let (directory, _) = try Self.log(batches: 4)
        let report = try LogRepair.repair(directory: directory.path, placeholder: Self.placeholder)
        #expect(!report.changed)
        #expect("\(report)".contains("nothing to repair"))
    }
}
