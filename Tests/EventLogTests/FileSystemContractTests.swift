import EventLog
import FaultInjection
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What every ``FileSystem`` must do, run against the real one and the fault-injecting twin with
/// no fault due (none planned, and one planned far beyond the calls made): the twin counts calls
/// and fails on demand, and otherwise must be the real one, call for call, or the fault suite
/// would test a log that does not run on the disk.
// System calls on files: on threads of their own, off the cooperative pool.
@Suite(.ownThreads)
struct FileSystemContractTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case posix, faultInjecting, faultDueLater
        var testDescription: String { rawValue }

        var fileSystem: any FileSystem {
            switch self {
            case .posix: PosixFileSystem()
            case .faultInjecting: FaultInjectingFileSystem(plan: nil)
            case .faultDueLater: FaultInjectingFileSystem(plan: .init(.crash, at: 1_000_000))
            }
        }
    }

    static let readWrite = O_RDWR | O_CREAT | O_CLOEXEC

    /// `bytes` as written at `offset`, checked whole (a write may be short: the contract allows it).
    static func write(_ text: String, at offset: Int64, to descriptor: Int32, on fileSystem: any FileSystem) throws {
        let bytes = Array(text.utf8)
        let written = try bytes.withUnsafeBytes { try fileSystem.write(descriptor, $0, at: offset) }
        #expect(written == bytes.count)
    }

    static func read(
        _ count: Int, at offset: Int64, from descriptor: Int32, on fileSystem: any FileSystem
    ) throws
        -> String
    {
        var buffer = [UInt8](repeating: 0, count: count)
        let read = try buffer.withUnsafeMutableBytes { try fileSystem.read(descriptor, into: $0, at: offset) }
        return String(decoding: buffer[0..<read], as: UTF8.self)
    }

    @Test(arguments: Kind.allCases)
    func whatIsWrittenAtAnOffsetIsReadBackThereAndTheSizeFollows(_ kind: Kind) throws {
        let fileSystem = kind.fileSystem
        let directory = try TemporaryDirectory("fs")
        let descriptor = try fileSystem.open(directory.file("a"), flags: Self.readWrite, mode: 0o600)
        defer { fileSystem.close(descriptor) }
        try Self.write("hello", at: 0, to: descriptor, on: fileSystem)
        try Self.write("world", at: 10, to: descriptor, on: fileSystem)
        try fileSystem.dataSync(descriptor)
        #expect(try fileSystem.size(of: descriptor) == 15)
        #expect(try Self.read(5, at: 10, from: descriptor, on: fileSystem) == "world")
        #expect(try Self.read(100, at: 0, from: descriptor, on: fileSystem).utf8.count == 15)
        #expect(try Self.read(10, at: 15, from: descriptor, on: fileSystem) == "", "0 bytes at the end of the file")
    }

    @Test(arguments: Kind.allCases)
    func truncatingCutsTheFileBack(_ kind: Kind) throws {
        let fileSystem = kind.fileSystem
        let directory = try TemporaryDirectory("fs")
        let descriptor = try fileSystem.open(directory.file("a"), flags: Self.readWrite, mode: 0o600)
        defer { fileSystem.close(descriptor) }
        try Self.write("0123456789", at: 0, to: descriptor, on: fileSystem)
        try fileSystem.truncate(descriptor, to: 4)
        #expect(try fileSystem.size(of: descriptor) == 4)
        #expect(try Self.read(10, at: 0, from: descriptor, on: fileSystem) == "0123")
    }

    @Test(arguments: Kind.allCases)
    func directoriesAreMadeListedSyncedAndAnExistingOneIsAnError(_ kind: Kind) throws {
        let fileSystem = kind.fileSystem
        let directory = try TemporaryDirectory("fs")
        let made = directory.file("made")
        try fileSystem.makeDirectory(made, mode: 0o700)
        #expect(throws: SystemError(EEXIST)) { try fileSystem.makeDirectory(made, mode: 0o700) }
        for name in ["b", "a"] {
            fileSystem.close(try fileSystem.open(made + "/" + name, flags: Self.readWrite, mode: 0o600))
        }
        #expect(try fileSystem.list(made).sorted() == ["a", "b"], "no . or ..")
        let descriptor = try fileSystem.open(made, flags: O_RDONLY | O_DIRECTORY | O_CLOEXEC, mode: 0)
        defer { fileSystem.close(descriptor) }
        try fileSystem.sync(descriptor)
    }

    @Test(arguments: Kind.allCases)
    func renameMovesRemoveDeletesAndExistsSaysSo(_ kind: Kind) throws {
        let fileSystem = kind.fileSystem
        let directory = try TemporaryDirectory("fs")
        let from = directory.file("from")
        let to = directory.file("to")
        fileSystem.close(try fileSystem.open(from, flags: Self.readWrite, mode: 0o600))
        #expect(fileSystem.exists(from) && !fileSystem.exists(to))
        try fileSystem.rename(from, to: to)
        #expect(!fileSystem.exists(from) && fileSystem.exists(to))
        try fileSystem.remove(to)
        #expect(!fileSystem.exists(to))
        #expect(throws: SystemError(ENOENT)) { try fileSystem.remove(to) }
        #expect(throws: SystemError(ENOENT)) { try fileSystem.open(to, flags: O_RDONLY | O_CLOEXEC, mode: 0) }
    }

    @Test(arguments: Kind.allCases)
    func modesAreSetExactlyByDescriptorAndByPath(_ kind: Kind) throws {
        let fileSystem = kind.fileSystem
        let directory = try TemporaryDirectory("fs")
        let path = directory.file("a")
        let descriptor = try fileSystem.open(path, flags: Self.readWrite, mode: 0o600)
        defer { fileSystem.close(descriptor) }
        func mode() -> mode_t {
            var info = stat()
            stat(path, &info)
            return info.st_mode & 0o777
        }
        try fileSystem.setMode(descriptor, 0o640)
        #expect(mode() == 0o640)
        try fileSystem.setMode(path: path, 0o604)
        #expect(mode() == 0o604)
    }

    @Test(arguments: Kind.allCases)
    func anExclusiveLockRefusesASecondHolderUntilItIsReleased(_ kind: Kind) throws {
        let fileSystem = kind.fileSystem
        let directory = try TemporaryDirectory("fs")
        let path = directory.file("lock")
        let first = try fileSystem.open(path, flags: Self.readWrite, mode: 0o600)
        defer { fileSystem.close(first) }
        let second = try fileSystem.open(path, flags: Self.readWrite, mode: 0o600)
        defer { fileSystem.close(second) }
        try fileSystem.lockExclusively(first)
        #expect(throws: SystemError(EWOULDBLOCK)) { try fileSystem.lockExclusively(second) }
        fileSystem.unlock(first)
        try fileSystem.lockExclusively(second)
        fileSystem.unlock(second)
    }
}
