import EventLog
import Foundation
import TestSupport
import Testing

/// `bureau log repair`'s core: damage moved aside, positions kept contiguous, nothing deleted.
// Writes, syncs and reads files without end: on threads of its own, off the cooperative pool.
@Suite(.ownThreads)
struct LogRepairTests {
    /// A placeholder whose body says which position it stands for, with the lost event's id
    /// when the damaged record still names it.
    static func placeholder(_ lost: LogRepair.LostPosition) -> (EventID, Data) {
        (lost.id ?? EventID(high: 1, low: lost.position), Data("lost \(lost.position)".utf8))
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
        let (keptBefore, keptAfter): ([LogRecord], [LogRecord]) = (Array(read[0..<2]), Array(read[3...]))
        #expect(keptBefore == Array(records[0..<2]))
        #expect(keptAfter == Array(records[3...]))
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
        let kept: [LogRecord] = Array(read.prefix(28))
        #expect(kept == Array(records.prefix(28)))
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

    /// What the recovery point says when the log is repaired: a power cut can leave it older
    /// than the data, and it can be lost or damaged like any file.
    enum RecoveryPointState: String, CaseIterable, CustomStringConvertible {
        case current, stale, missing, damaged
        var description: String { rawValue }
    }

    /// Where the damage is: the last record, a record between the recovery point and the end,
    /// or the record the recovery point names.
    enum DamagedRecord: String, CaseIterable, CustomStringConvertible {
        case last, middleOfTail, atRecoveryPoint
        var description: String { rawValue }
    }

    /// The record at `position` of a log written by ``log(batches:of:)`` (40-byte records, so 72
    /// bytes framed): its segment's path and its offset there.
    static func locate(_ position: UInt64, in directory: String) throws -> (path: String, offset: Int64) {
        let first = try #require(
            Files.list(directory).filter { $0.hasSuffix(".seg") }.compactMap { UInt64($0.prefix(20)) }
                .filter { $0 <= position }.max())
        let name = Files.list(directory).first { $0.hasSuffix(".seg") && UInt64($0.prefix(20)) == first } ?? ""
        return (directory + "/" + name, 40 + 72 * Int64(position - first))
    }

    @Test(arguments: RecoveryPointState.allCases, DamagedRecord.allCases)
    func aDamagedRecordPastAnyRecoveryPointIsKeptAsLostNeverCut(
        state: RecoveryPointState, damaged: DamagedRecord
    ) throws {
        // 12 batches of 10 in three segments (1…50, 51…100, 101…120); the recovery point as it
        // stood after the sixth batch (60) is kept aside.
        let directory = try TemporaryDirectory("log")
        let records = FileEventLogTests.records(1...120)
        let recoveryPoint = directory.file("recovery-point")
        var staleBytes: [UInt8] = []
        do {
            let log = try FileEventLog(directory: directory.path, options: FileEventLogTests.smallSegments())
            for batch in 0..<12 {
                try log.append(Array(records[batch * 10..<(batch + 1) * 10]))
                try log.commit()
                if batch == 5 {
                    staleBytes = try #require(FileManager.default.contents(atPath: recoveryPoint)).map { $0 }
                }
            }
            try log.close()
        }
        switch state {
        case .current: break
        case .stale: try Data(staleBytes).write(to: URL(fileURLWithPath: recoveryPoint))
        case .missing: unlink(recoveryPoint)
        case .damaged:
            try Data(staleBytes).write(to: URL(fileURLWithPath: recoveryPoint))
            try Files.overwrite(recoveryPoint, at: 9, with: [staleBytes[9] ^ 0x10])
        }
        let position: UInt64 =
            switch damaged {
            case .last: 120
            case .middleOfTail: 90
            case .atRecoveryPoint: 60
            }
        // A byte of the body changed: the record is whole, its checksum fails.
        let (path, offset) = try Self.locate(position, in: directory.path)
        try Files.overwrite(path, at: offset + 40, with: [0xEE])

        #expect(throws: (any Error).self, "\(state), \(damaged): the log must refuse to open") {
            try FileEventLog(directory: directory.path, options: FileEventLogTests.smallSegments()).close()
        }
        let verified = try LogVerifier.verify(directory: directory.path)
        #expect(verified.problems.map(\.firstPosition) == [position], "\(verified.problems)")
        #expect(verified.problems.first?.lastPosition.map { $0 >= position } == true, "\(verified.problems)")

        let report = try LogRepair.repair(directory: directory.path, placeholder: Self.placeholder)
        #expect(report.lost == [position...position], "\(state), \(damaged)")
        #expect(report.head == 120)
        let read = try FileEventLogFaultTests.everything(in: directory.path)
        #expect(read.map(\.position) == Array(1...120), "\(state), \(damaged): every position is kept")
        for (record, original) in zip(read, records) where record.position != position {
            #expect(record == original, "\(state), \(damaged): position \(record.position) changed")
        }
        let lost = try #require(read.first { $0.position == position })
        #expect(lost.body == Data("lost \(position)".utf8))
        #expect(lost.id == records[Int(position) - 1].id, "the placeholder keeps the acknowledged id")
        #expect(try LogVerifier.verify(directory: directory.path).ok)
        // The bus opens it and goes on after the head, never handing out a position again.
        let log = try FileEventLog(directory: directory.path, options: FileEventLogTests.smallSegments())
        #expect(log.head == 120)
        #expect(log.position(of: records[Int(position) - 1].id) == position)
        try log.close()
    }

    @Test func aLastRecordWhoseLengthWasDamagedIsNotTakenForATornWrite() throws {
        let (directory, records) = try Self.log(batches: 12)
        unlink(directory.file("recovery-point"))
        let (path, offset) = try Self.locate(120, in: directory.path)
        // The length now runs past the end of the file, as a torn write's would.
        try Files.overwrite(path, at: offset + 2, with: [0x01])
        #expect(throws: (any Error).self, "a complete record with a damaged length is damage, not a torn write") {
            try FileEventLog(directory: directory.path, options: FileEventLogTests.smallSegments()).close()
        }
        let report = try LogRepair.repair(directory: directory.path, placeholder: Self.placeholder)
        #expect(report.lost == [120...120])
        let read = try FileEventLogFaultTests.everything(in: directory.path)
        #expect(read.map(\.position) == Array(1...120))
        #expect(read.last?.id == records[119].id)
    }

    @Test func aTornLastWriteIsStillCutWhateverTheRecoveryPoint() throws {
        let (directory, records) = try Self.log(batches: 12)
        unlink(directory.file("recovery-point"))
        let (path, offset) = try Self.locate(120, in: directory.path)
        try Files.truncate(path, to: offset + 50)
        let report = try LogRepair.repair(directory: directory.path, placeholder: Self.placeholder)
        #expect(report.lost.isEmpty, "a write that never completed was never acknowledged")
        #expect(try FileEventLogFaultTests.everything(in: directory.path) == Array(records.prefix(119)))
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
