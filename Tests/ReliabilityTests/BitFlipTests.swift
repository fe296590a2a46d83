import BureauSchemas
import Bus
import EventLog
import Foundation
import LogTools
import TestSupport
import Testing

/// One flipped bit anywhere in a log's files — a segment's header, middle or tail, an index,
/// the recovery point, the lock file — is noticed on start or on read, nothing traps, every
/// tool that could not read everything says where, `log verify` lists it, and a repair makes
/// the log whole again with every undamaged event as it was.
// Starts, kills and stops daemons (their log opened and synced, their threads joined) again
// and again: on threads of its own, off the cooperative pool.
@Suite(.ownThreads)
struct BitFlipTests {
    /// A log written by a real daemon: small segments, so that it has many; then stopped.
    static func pristineLog() async throws -> (TemporaryDirectory, [StoredEvent]) {
        let run = try FaultRun(plan: nil)
        run.start(plan: nil)
        let client = try run.client()
        for batch in FaultWorkload.make(count: 12, size: 8, seed: 99).batches {
            _ = try await client.publish(envelopes: batch.filter { !$0.invalid }.map(\.envelope))
        }
        client.close()
        run.stop()
        let copy = try TemporaryDirectory("pristine")
        try FileManager.default.copyItem(atPath: run.location.logDirectory, toPath: copy.file("log"))
        var events: [StoredEvent] = []
        try LogFiles.forEach(directory: copy.file("log")) { events.append($0) }
        return (copy, events)
    }

    /// Where to flip, per file: every byte of small files and headers, a spread over the rest.
    static func offsets(of name: String, size: Int64) -> [Int64] {
        if name.hasSuffix(".seg") {
            let step: Int64 = max(1, (size - 40) / 12)
            let spread: [Int64] = Array(stride(from: Int64(40), to: size, by: Int64.Stride(step)))
            return Array(Int64(0)..<min(size, 40)) + spread + [size - 1]
        }
        return Array(0..<size)
    }

    @Test func aFlippedBitAnywhereIsNoticedAndARepairKeepsEverythingElse() async throws {
        let (pristine, original) = try await Self.pristineLog()
        let names = Files.list(pristine.file("log"))
        #expect(names.filter { $0.hasSuffix(".seg") }.count > 4)
        var cases = 0
        var refusedToOpen = 0
        var failedOnRead = 0
        var repaired = 0
        for name in names {
            for offset in Self.offsets(of: name, size: Files.size(pristine.file("log/" + name))) {
                cases += 1
                let work = try TemporaryDirectory("flip")
                let log = work.file("log")
                try FileManager.default.copyItem(atPath: pristine.file("log"), toPath: log)
                let path = log + "/" + name
                let byte = try #require(FileManager.default.contents(atPath: path)?[Int(offset)])
                try Files.overwrite(path, at: offset, with: [byte ^ UInt8(1 << (offset % 8))])
                let label = "\(name) byte \(offset)"

                // Start: the log opens, or refuses naming the damaged file.
                var options = FileEventLog.Options()
                options.deduplicationWindow = 10  // so that older segments are checked on read, not on start
                var damaged = false
                do {
                    try FileEventLog(directory: log, options: options, logger: TestLogging.logger("log")).close()
                } catch {
                    damaged = true
                    refusedToOpen += 1
                    #expect("\(error)".contains(name), "\(label): \(error)")
                }
                // Read: everything as it was, or an error naming the damaged file.
                if !damaged {
                    var read: [StoredEvent] = []
                    do {
                        try LogFiles.forEach(directory: log) { read.append($0) }
                        #expect(read == original, "\(label): the log reads differently and says nothing")
                    } catch {
                        damaged = true
                        failedOnRead += 1
                        #expect("\(error)".contains(name), "\(label): \(error)")
                    }
                }
                // Verify: every bit of a segment is checked, and an index that no longer matches is noted.
                let report = try LogVerifier.verify(directory: log)
                if name.hasSuffix(".seg") {
                    #expect(!report.ok, "\(label): verify found nothing")
                    #expect(report.problems.allSatisfy { $0.segment.hasSuffix(name) }, "\(label): \(report.problems)")
                }
                if damaged || !report.ok {
                    let result = try LogRepair.repair(directory: log, placeholder: LogRepair.recordLost)
                    repaired += 1
                    #expect(result.changed, "\(label)")
                    try FileEventLog(directory: log, options: options, logger: TestLogging.logger("log")).close()
                    var read: [StoredEvent] = []
                    try LogFiles.forEach(directory: log) { read.append($0) }
                    #expect(read.map(\.position) == original.map(\.position), "\(label): positions after repair")
                    for (event, before) in zip(read, original) where event != before {
                        #expect(event.type == Bureau_System_RecordLost.protoMessageName, "\(label): \(event.position)")
                    }
                    #expect(read.filter { $0.type == Bureau_System_RecordLost.protoMessageName }.count <= 1)
                    #expect(try LogVerifier.verify(directory: log).ok, "\(label): verify after repair")
                }
            }
        }
        print(
            "bit flips: \(cases) flipped bits in \(names.count) files; \(refusedToOpen) refused at start, "
                + "\(failedOnRead) stopped a read naming the file, \(repaired) repaired; traps 0")
    }
}
