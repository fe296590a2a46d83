import EventLog
import FaultInjection
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// How the file log behaves when a write, a sync or a segment roll fails.
// Writes, syncs and reads files without end: on threads of its own, off the cooperative pool.
@Suite(.ownThreads)
struct FileEventLogFaultTests {
    static func options(_ fileSystem: any FileSystem) -> FileEventLog.Options {
        var options = FileEventLogTests.smallSegments()
        options.fileSystem = fileSystem
        return options
    }

    static func everything(in directory: String) throws -> [LogRecord] {
        let cursor = try LogCursor(directory: directory, after: 0)
        var records: [LogRecord] = []
        while let record = try cursor.next() { records.append(record) }
        return records
    }

    /// Appends `records` in batches of `batch` until the first failure; returns what was committed.
    static func appendUntilFailure(
        _ log: FileEventLog, _ records: [LogRecord], batch: Int
    ) -> (
        committed: [LogRecord], error: EventLogError?
    ) {
        var committed: [LogRecord] = []
        for start in stride(from: 0, to: records.count, by: batch) {
            let slice = Array(records[start..<min(start + batch, records.count)])
            do {
                try log.append(slice)
                try log.commit()
                committed += slice
            } catch let error as EventLogError {
                return (committed, error)
            } catch {
                return (committed, .failed("\(error)"))
            }
        }
        return (committed, nil)
    }

    /// How many calls count towards `fault` when `records` are appended in batches of `batch`
    /// to a log in `directory` that nothing fails.
    static func calls(
        _ fault: FaultInjectingFileSystem.Fault, appending records: [LogRecord], batch: Int, in directory: String
    ) throws -> Int {
        let counter = FaultInjectingFileSystem(plan: nil)
        let log = try FileEventLog(directory: directory, options: Self.options(counter))
        _ = Self.appendUntilFailure(log, records, batch: batch)
        try log.close()
        return counter.count(of: fault)
    }

    @Test func aFullDiskRefusesTheBatchLeavesTheLogAsItWasAndAcceptingResumesOnceSpaceIsFree() throws {
        let directory = try TemporaryDirectory("log")
        let records = FileEventLogTests.records(1...60, size: 90)
        // Count the writes of a clean run first, then fill the disk in the middle of it.
        let writes = try Self.calls(.shortWrite, appending: records, batch: 6, in: directory.file("count"))
        for call in stride(from: 1, through: writes, by: 3) {
            let path = directory.file("full-\(call)")
            let fileSystem = FaultInjectingFileSystem(plan: .init(.shortWrite, at: call))
            guard let log = try? FileEventLog(directory: path, options: Self.options(fileSystem)) else {
                continue  // the fault hit opening: nothing to check but that it said so
            }
            let (committed, error) = Self.appendUntilFailure(log, records, batch: 6)
            if case .diskFull? = error {
                // Nothing of the refused batch is readable, and the log takes the same batch once there is space.
                #expect(try Self.everything(in: path) == committed, "at write \(call)")
                #expect(log.head == UInt64(committed.count))
                fileSystem.freeSpace()
                let rest = Array(records[committed.count...])
                let (more, again) = Self.appendUntilFailure(log, rest, batch: 6)
                #expect(again == nil, "at write \(call): \(String(describing: again))")
                #expect(try Self.everything(in: path) == committed + more)
            }
            try? log.close()
            // Whatever happened, the log reopens whole and holds exactly what was committed, or more
            // of what was written but never acknowledged.
            let reopened = try FileEventLog(directory: path, options: FileEventLogTests.smallSegments())
            let read = try Self.everything(in: path)
            #expect(Array(read.prefix(committed.count)) == committed, "at write \(call)")
            #expect(read == Array(records.prefix(read.count)))
            #expect(reopened.head == UInt64(read.count))
            try reopened.close()
            #expect(try LogVerifier.verify(directory: path).ok, "at write \(call)")
        }
    }

    @Test func aFailedFdatasyncIsNeverRetriedAndTheLogRefusesEverythingUntilReopened() throws {
        // The first commit's fdatasync fails: after those of opening.
        let opening = try FileEventLogCommitTests.syncsOfOpening(FileEventLogTests.smallSegments())
        let directory = try TemporaryDirectory("log")
        let fileSystem = FaultInjectingFileSystem(plan: .init(.failedSync, at: opening + 1))
        let log = try FileEventLog(directory: directory.path, options: Self.options(fileSystem))
        let records = FileEventLogTests.records(1...40)
        let (committed, error) = Self.appendUntilFailure(log, records, batch: 4)
        guard case .failed(let reason)? = error else {
            Issue.record("expected the log to fail, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("fdatasync"))
        #expect(reason.contains("not retried"))
        // Every call after it is refused with the same error, and nothing syncs again.
        #expect(throws: EventLogError.failed(reason)) { try log.commit() }
        #expect(throws: EventLogError.failed(reason)) {
            try log.append(FileEventLogTests.records((log.head + 1)...(log.head + 1)))
        }
        try log.close()
        #expect(fileSystem.retriedSyncs == 0)
        // Reopening recovers from what is on disk: everything acknowledged, in order, and
        // nothing the failed fdatasync covered (cut, as it may be in the page cache only).
        let reopened = try FileEventLog(directory: directory.path, options: FileEventLogTests.smallSegments())
        #expect(reopened.head == UInt64(committed.count))
        #expect(try Self.everything(in: directory.path) == committed)
        try reopened.close()
    }

    @Test(arguments: [FaultInjectingFileSystem.Fault.io, .crash, .noSpace, .failedSync])
    func aFaultAtAnyCallOfASegmentRollLeavesALogThatReopensWhole(fault: FaultInjectingFileSystem.Fault) throws {
        let directory = try TemporaryDirectory("log")
        let records = FileEventLogTests.records(1...80, size: 90)
        let total = try Self.calls(fault, appending: records, batch: 5, in: directory.file("count"))
        for call in 1...total {
            let path = directory.file("\(fault)-\(call)")
            let fileSystem = FaultInjectingFileSystem(plan: .init(fault, at: call))
            var committed: [LogRecord] = []
            if let log = try? FileEventLog(directory: path, options: Self.options(fileSystem)) {
                committed = Self.appendUntilFailure(log, records, batch: 5).committed
                try? log.close()
            }
            #expect(fileSystem.retriedSyncs == 0, "\(fault) at call \(call)")
            guard FileManager.default.fileExists(atPath: path) else { continue }
            let reopened: FileEventLog
            do {
                reopened = try FileEventLog(directory: path, options: FileEventLogTests.smallSegments())
            } catch {
                Issue.record("\(fault) at call \(call): the log does not reopen: \(error)")
                continue
            }
            let read = try Self.everything(in: path)
            #expect(Array(read.prefix(committed.count)) == committed, "\(fault) at call \(call)")
            #expect(read == Array(records.prefix(read.count)), "\(fault) at call \(call)")
            try reopened.close()
            #expect(try LogVerifier.verify(directory: path).ok, "\(fault) at call \(call)")
        }
    }

    @Test func filesAndDirectoriesAreOwnerOnlyWhateverTheUmask() throws {
        let directory = try TemporaryDirectory("log")
        let previous = umask(0)
        defer { umask(previous) }
        let path = directory.file("data/log")
        let log = try FileEventLog(directory: path, options: FileEventLogTests.smallSegments())
        for start in stride(from: UInt64(1), through: 100, by: 20) {
            try log.append(FileEventLogTests.records(start...(start + 19)))
            try log.commit()
        }
        try log.close()
        #expect(Files.mode(directory.file("data")) == 0o700)
        #expect(Files.mode(path) == 0o700)
        let names = Files.list(path)
        #expect(names.contains("recovery-point") && names.contains("LOCK"))
        for name in names {
            #expect(Files.mode(path + "/" + name) == 0o600, "\(name)")
        }
    }

    @Test func aFlippedBitInAnIndexNeverStopsTheLogAndTheNewestIndexIsRebuilt() throws {
        let directory = try TemporaryDirectory("log")
        let records = FileEventLogTests.records(1...300)
        do {
            let log = try FileEventLog(directory: directory.path, options: FileEventLogTests.smallSegments())
            for start in stride(from: 0, to: 300, by: 10) {
                try log.append(Array(records[start..<start + 10]))
                try log.commit()
            }
            try log.close()
        }
        let indexes = Files.list(directory.path).filter { $0.hasSuffix(".idx") }
        #expect(indexes.count > 2)
        // The top bit of an offset, in an old index and in the newest one.
        for name in [indexes[0], indexes[indexes.count - 1]] where Files.size(directory.file(name)) >= 16 {
            try Files.overwrite(directory.file(name), at: 15, with: [0x80])
        }
        let log = try FileEventLog(directory: directory.path, options: FileEventLogTests.smallSegments())
        #expect(log.head == 300)
        #expect(log.recovery.rebuiltIndex)
        for after in [0, 7, 55, 150, 299] as [UInt64] {
            let cursor = try LogCursor(directory: directory.path, after: after)
            var read: [LogRecord] = []
            while let record = try cursor.next() { read.append(record) }
            #expect(read == Array(records[Int(after)...]), "after \(after)")
        }
        try log.close()
        let report = try LogVerifier.verify(directory: directory.path)
        #expect(report.ok)
        #expect(report.notes.contains { $0.contains(indexes[0]) })
    }

    @Test func anUnreadableRecoveryPointIsNotedAndTheDirectoryListedInstead() throws {
        let (directory, _) = try FileEventLogTests.crashedLog(acknowledged: 12, more: 0)
        try Files.overwrite(directory.file("recovery-point"), at: 9, with: [0x55])
        let log = try FileEventLog(directory: directory.path, options: FileEventLogTests.smallSegments())
        #expect(log.head == 12)
        #expect(log.recovery.listedDirectory)
        #expect(log.recovery.recoveryPointProblem?.contains("checksum") == true)
        try log.close()
    }
}
