import EventLog
import Foundation
import TestSupport
import Testing

/// The file log's commits under way: with `always`, ``FileEventLog/beginCommit(whenFinished:)``
/// runs the fdatasync on the log's sync thread while the writer goes on.
struct FileEventLogCommitTests {
    /// The position the log's recovery point says was acknowledged.
    static func acknowledged(in directory: String) throws -> UInt64 {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: directory + "/recovery-point"))
        return bytes[8..<16].withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
    }

    @Test func theWriterGoesOnWhileAnFdatasyncIsUnderWayAndNothingAfterItIsAcknowledgedByIt() throws {
        let directory = try TemporaryDirectory("log")
        let disk = FaultInjectingFileSystem(plan: nil)
        var options = FileEventLogTests.oneSegment()
        options.fileSystem = disk
        let log = try FileEventLog(directory: directory.path, options: options)
        let records = FileEventLogTests.records(1...20)
        try log.append(Array(records[0..<10]))

        disk.holdSyncs()
        let finished = DispatchSemaphore(value: 0)
        let commit = try #require(try log.beginCommit { finished.signal() })
        #expect(commit.head == 10)
        #expect(disk.waitUntilSyncsHeld(), "the fdatasync runs on the sync thread")
        #expect(!commit.isFinished)
        // The writer is not held: the next batch is written meanwhile.
        try log.append(Array(records[10...]))
        #expect(log.head == 20)
        #expect(try Self.acknowledged(in: directory.path) == 0, "nothing is acknowledged before the fdatasync")

        disk.releaseSyncs()
        #expect(finished.wait(timeout: .now() + 10) == .success)
        try log.finishCommit(commit)
        #expect(try Self.acknowledged(in: directory.path) == 10, "the commit covers what came before it, no more")
        let next = try #require(try log.beginCommit(whenFinished: {}))
        #expect(next.head == 20)
        try log.finishCommit(next)
        #expect(try Self.acknowledged(in: directory.path) == 20)
        try log.close()

        let reopened = try FileEventLog(directory: directory.path, options: FileEventLogTests.oneSegment())
        #expect(try reopened.makeReader().read(after: 0, through: 20, limit: 100, maxBytes: 1 << 20) == records)
        try reopened.close()
    }

    @Test func aFailedFdatasyncUnderWayFailsTheLogAndIsNeverRetried() throws {
        // How many syncs opening makes, so that the first commit's is the one that fails.
        let counter = FaultInjectingFileSystem(plan: nil)
        var options = FileEventLogTests.oneSegment()
        options.fileSystem = counter
        let scratch = try TemporaryDirectory("count")
        let counted = try FileEventLog(directory: scratch.path, options: options)
        let opening = counter.count(of: .failedSync)
        try counted.close()

        let directory = try TemporaryDirectory("log")
        let disk = FaultInjectingFileSystem(plan: .init(.failedSync, at: opening + 1))
        options.fileSystem = disk
        let log = try FileEventLog(directory: directory.path, options: options)
        try log.append(FileEventLogTests.records(1...5))
        let commit = try #require(try log.beginCommit(whenFinished: {}))
        // Written while the failing fdatasync is under way: never acknowledged either.
        try? log.append(FileEventLogTests.records(6...6))
        #expect {
            try log.finishCommit(commit)
        } throws: { error in
            guard case .failed(let reason) = error as? EventLogError else { return false }
            return reason.contains("fdatasync") && reason.contains("not retried")
        }
        #expect(throws: EventLogError.self) { try log.append(FileEventLogTests.records(7...7)) }
        #expect(throws: EventLogError.self) { try log.beginCommit(whenFinished: {}) }
        #expect(try Self.acknowledged(in: directory.path) == 0)
        try? log.close()
        #expect(disk.retriedSyncs == 0)
    }
}
