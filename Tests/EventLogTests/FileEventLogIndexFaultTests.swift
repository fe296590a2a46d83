import EventLog
import FaultInjection
import Foundation
import TestSupport
import Testing

/// The index is a hint: one that cannot be rebuilt when the log opens stops indexing the
/// segment, and says so once, in the recovery report the opening logs.
// Writes and syncs files, opening a log once per call that could fail: off the cooperative pool.
@Suite(.ownThreads)
struct FileEventLogIndexFaultTests {
    @Test func anIndexThatCannotBeRebuiltIsReportedAndTheLogOpensAndReadsWhole() throws {
        // Given a closed log whose newest segment's index is damaged
        let directory = try TemporaryDirectory("log")
        let pristine = directory.file("pristine")
        let records = FileEventLogTests.records(1...300)
        do {
            let log = try FileEventLog(directory: pristine, options: FileEventLogTests.smallSegments())
            for start in stride(from: 0, to: 300, by: 10) {
                try log.append(Array(records[start..<start + 10]))
                try log.commit()
            }
            try log.close()
        }
        let newest = try #require(Files.list(pristine).filter { $0.hasSuffix(".idx") }.sorted().last)
        try Files.overwrite(pristine + "/" + newest, at: 15, with: [0x80])
        func copy(_ name: String) throws -> String {
            let path = directory.file(name)
            try FileManager.default.copyItem(atPath: pristine, toPath: path)
            return path
        }
        // When every call that changes the disk while it opens fails in turn, until one is the
        // rebuilt index's write
        let counter = FaultInjectingFileSystem(plan: nil)
        try FileEventLog(directory: try copy("dry"), options: FileEventLogFaultTests.options(counter)).close()
        var reported: (log: FileEventLog, path: String)?
        for call in 1...counter.count(of: .io) {
            let disk = FaultInjectingFileSystem(plan: .init(.io, at: call))
            let path = try copy("at-\(call)")
            let log = try? FileEventLog(directory: path, options: FileEventLogFaultTests.options(disk))
            if let injected = disk.injected, injected.hasSuffix("write \(newest)") {
                reported = try (#require(log, "the log opens without its index: \(injected)"), path)
                break
            }
            try log?.close()
        }
        let (log, path) = try #require(reported, "no call wrote \(newest)")
        // Then it opened whole, said why the segment is not indexed, and reads as before
        #expect(log.head == 300)
        let problem = try #require(log.recovery.indexProblem)
        #expect(problem.contains("\(newest) could not be rebuilt"), "\(problem)")
        #expect("\(log.recovery)".contains("stopped indexing the newest segment: "))
        #expect(try FileEventLogFaultTests.everything(in: path) == records)
        try log.append(FileEventLogTests.records(301...320))
        try log.commit()
        try log.close()
        #expect(try FileEventLogFaultTests.everything(in: path).map(\.position) == Array(1...320))
    }
}
