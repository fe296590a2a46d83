import EventLog
import FaultInjection
import Foundation
import Guards
import TestSupport
import Testing

/// The file log's commits under way: with `always`, ``FileEventLog/beginCommit(whenFinished:)``
/// runs the fdatasync on the log's sync thread while the writer goes on.
// Writes, syncs and reads files without end: on threads of its own, off the cooperative pool.
@Suite(.ownThreads)
struct FileEventLogCommitTests {
    /// The position the log's recovery point says was acknowledged.
    static func acknowledged(in directory: String) throws -> UInt64 {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: directory + "/recovery-point"))
        return bytes[8..<16].withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
    }

    /// A log in a new directory whose file calls go through `disk`.
    static func log(
        _ options: FileEventLog.Options, on disk: FaultInjectingFileSystem
    ) throws -> (TemporaryDirectory, FileEventLog) {
        var options = options
        options.fileSystem = disk
        let directory = try TemporaryDirectory("log")
        return (directory, try FileEventLog(directory: directory.path, options: options))
    }

    /// How many fdatasyncs and fsyncs opening a new log makes: a plan that fails the next one
    /// fails the first commit's.
    static func syncsOfOpening(_ options: FileEventLog.Options) throws -> Int {
        let counter = FaultInjectingFileSystem(plan: nil)
        let (scratch, counted) = try log(options, on: counter)
        let opening = counter.count(of: .failedSync)
        try withExtendedLifetime(scratch) { try counted.close() }
        return opening
    }

    @Test func theWriterGoesOnWhileAnFdatasyncIsUnderWayAndNothingAfterItIsAcknowledgedByIt() async throws {
        let disk = FaultInjectingFileSystem(plan: nil)
        let (directory, log) = try Self.log(FileEventLogTests.oneSegment(), on: disk)
        let records = FileEventLogTests.records(1...20)
        try log.append(Array(records[0..<10]))

        disk.holdSyncs()
        let finished = DispatchSemaphore(value: 0)
        let commit = try #require(try log.beginCommit { finished.signal() })
        #expect(commit.head == 10)
        #expect(
            try await OwnThread.run(name: "test-wait") { disk.waitUntilSyncsHeld() },
            "the fdatasync runs on the sync thread")
        #expect(!commit.isFinished)
        // The writer is not held: the next batch is written meanwhile.
        try log.append(Array(records[10...]))
        #expect(log.head == 20)
        #expect(try Self.acknowledged(in: directory.path) == 0, "nothing is acknowledged before the fdatasync")

        disk.releaseSyncs()
        #expect(try await OwnThread.run(name: "test-wait") { finished.wait(timeout: .now() + 10) == .success })
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

    @Test func aFailedFdatasyncUnderWayFailsTheLogAndIsNeverRetried() async throws {
        // The first commit's fdatasync is the one that fails.
        let opening = try Self.syncsOfOpening(FileEventLogTests.oneSegment())
        let disk = FaultInjectingFileSystem(plan: .init(.failedSync, at: opening + 1))
        let (directory, log) = try Self.log(FileEventLogTests.oneSegment(), on: disk)
        let records = FileEventLogTests.records(1...6)
        try log.append(Array(records[0..<5]))
        disk.holdSyncs()
        let commit = try #require(try log.beginCommit(whenFinished: {}))
        #expect(try await OwnThread.run(name: "test-wait") { disk.waitUntilSyncsHeld() })
        // Written while the fdatasync that will fail is under way: never acknowledged either.
        try log.append(Array(records[5...]))
        disk.releaseSyncs()
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
        // The records the failed fdatasync covered, and the one written behind it, were never
        // acknowledged and may be in the page cache only: they are cut, so that nothing (a
        // retry above all) takes them for stored. The disk of this test keeps what is written:
        // without the cut, reopening finds all six.
        let reopened = try FileEventLog(directory: directory.path, options: FileEventLogTests.oneSegment())
        #expect(reopened.head == 0)
        #expect(records.allSatisfy { reopened.position(of: $0.id) == nil })
        // A retry stores them again, at the same positions.
        try reopened.append(records)
        try reopened.commit()
        #expect(try reopened.makeReader().read(after: 0, through: 6, limit: 100, maxBytes: 1 << 20) == records)
        try reopened.close()
    }

    @Test func aSegmentRollWaitsForTheFdatasyncUnderWayAndEveryRecordSurvives() async throws {
        let disk = FaultInjectingFileSystem(plan: nil)
        let (directory, log) = try Self.log(FileEventLogTests.smallSegments(), on: disk)
        let records = FileEventLogTests.records(1...120)
        try log.append(Array(records[0..<20]))
        disk.holdSyncs()
        let commit = try #require(try log.beginCommit(whenFinished: {}))
        #expect(try await OwnThread.run(name: "test-wait") { disk.waitUntilSyncsHeld() })
        // Past the segment size: the appends roll, and a roll makes the old segment durable
        // first. A roll that comes while the fdatasync is held waits for it (never a second one
        // beside it); one that comes after it finds it finished. Either way nothing is lost.
        let appended = DispatchSemaphore(value: 0)
        let rest = Array(records[20...])
        // Handed to the thread that appends; the test touches the log again only after that
        // thread has signalled.
        let appending = UncheckedBox(log)
        try OwnThread.detached(name: "test-append") {
            do {
                for start in stride(from: 0, to: rest.count, by: 20) {
                    try appending.value.append(Array(rest[start..<start + 20]))
                }
            } catch {
                Issue.record("the append failed: \(error)")
            }
            appended.signal()
        }
        disk.releaseSyncs()
        #expect(try await OwnThread.run(name: "test-wait") { appended.wait(timeout: .now() + 10) == .success })
        try log.finishCommit(commit)
        try log.commit()
        #expect(try Self.acknowledged(in: directory.path) == 120)
        try log.close()
        #expect(disk.retriedSyncs == 0)
        #expect(Files.list(directory.path).filter { $0.hasSuffix(".seg") }.count > 1, "the log rolled")
        let reopened = try FileEventLog(directory: directory.path, options: FileEventLogTests.smallSegments())
        #expect(try reopened.makeReader().read(after: 0, through: 120, limit: 200, maxBytes: 1 << 20) == records)
        try reopened.close()
    }
}
