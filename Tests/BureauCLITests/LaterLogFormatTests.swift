import EventLog
import Foundation
import Guards
import TestSupport
import Testing

/// A log whose segment a later Bureau wrote, in a format version this build does not read: the
/// daemon refuses to start and `log verify` fails, both naming the segment and its version,
/// and neither calls it damage nor changes it.
@Suite(.timeLimit(.minutes(1)))
struct LaterLogFormatTests {
    @Test func theDaemonAndLogVerifyRefuseASegmentOfALaterVersionNamingItAndTheVersion() async throws {
        let work = try TemporaryDirectory("later-format")
        let log = work.file("data/log")
        try FileManager.default.createDirectory(atPath: work.file("data"), withIntermediateDirectories: true)
        let segment = log + "/00000000000000000001.seg"
        try await OwnThread.run(name: "test-log") {
            let writer = try FileEventLog(directory: log)
            try writer.append([LogRecord(position: 1, id: .random(), body: Data("an event".utf8))])
            try writer.commit()
            try writer.close()
            // The header a later Bureau, of format version 2, would write: version 2, its own checksum.
            var header = [UInt8](try Data(contentsOf: URL(fileURLWithPath: segment)).prefix(40))
            header.replaceSubrange(8..<12, with: [2, 0, 0, 0])
            let crc = Array(header[0..<32]).withUnsafeBytes { Checksum.crc32($0) }
            header.replaceSubrange(32..<36, with: withUnsafeBytes(of: crc.littleEndian, Array.init))
            try Files.overwrite(segment, at: 0, with: header)
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: segment))
        let bureau = BusProcess(directory: work.path, data: work.file("data"))
        let named = "\(segment) is in log format version 2; this Bureau reads version 1"

        let bus = try await bureau.run(["bus"], name: "bus")
        #expect(bus.code != 0, "the daemon started on it")
        #expect(bus.err.contains(named), "\(bus.err)")
        #expect(!bus.err.contains("repair"), "\(bus.err)")

        let verify = try await bureau.run(["log", "verify"])
        #expect(verify.code == 1)
        #expect(verify.out.contains("bad: \(named)"), "\(verify.out)")
        #expect(!verify.out.contains("log repair"), "a later format is not for this build's repair: \(verify.out)")

        let shown = try await bureau.run(["log", "show"])
        #expect(shown.code == 1)
        #expect(shown.err.contains(named), "\(shown.err)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: segment)) == before, "nothing was changed")
    }
}
