import Foundation
import TestSupport
import Testing

@testable import EventLog

#if canImport(Glibc)
    import Glibc
#endif

/// Small files the log reads whole (a recovery point, an index, a lock's owner): read to their
/// end, and refused past their limit, however small the limit is beside a read's chunk.
struct PosixFileTests {
    @Test(arguments: [0, 1, 4095, 4096])
    func aFileWithinTheLimitIsReadWhole(size: Int) throws {
        let directory = try TemporaryDirectory("readall")
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0) }
        try Data(bytes).write(to: URL(fileURLWithPath: directory.file("f")))
        #expect(try PosixFile.readAll(directory.file("f"), fileSystem: PosixFileSystem(), limit: 4096) == bytes)
    }

    @Test(arguments: [4097, 60_000, 200_000])
    func aFilePastTheLimitIsRefused(size: Int) throws {
        let directory = try TemporaryDirectory("readall")
        try Data(count: size).write(to: URL(fileURLWithPath: directory.file("f")))
        #expect(throws: EventLogError.io(operation: "read", path: directory.file("f"), errno: EFBIG)) {
            try PosixFile.readAll(directory.file("f"), fileSystem: PosixFileSystem(), limit: 4096)
        }
    }

    @Test func aProcFileWhoseSizeReadsAsZeroIsReadToItsEnd() throws {
        let cmdline = try PosixFile.readAll("/proc/self/cmdline", fileSystem: PosixFileSystem(), limit: 1 << 16)
        #expect(!cmdline.isEmpty && cmdline.last == 0)
    }
}
