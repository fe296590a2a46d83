import EventLog
import Foundation
import Testing

/// Modes are set after creation, so a permissive earlier mode (or umask) does not survive.
struct OwnerOnlyTests {
    static func scratch() -> String { NSTemporaryDirectory() + "owner-only-\(UUID().uuidString)" }

    @Test func directoriesAreMadeOwnerOnlyEvenWhenTheyWereOpen() throws {
        let root = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try OwnerOnly.makeDirectory(root + "/a/b")
        #expect(OwnerOnly.mode(of: root) == 0o700)
        #expect(OwnerOnly.mode(of: root + "/a") == 0o700)
        #expect(OwnerOnly.mode(of: root + "/a/b") == 0o700)
        chmod(root + "/a/b", 0o777)
        try OwnerOnly.makeDirectory(root + "/a/b")
        #expect(OwnerOnly.mode(of: root + "/a/b") == 0o700)
    }

    @Test func filesAreOwnerOnlyBeforeTheFirstByteEvenWhenTheyExistedOpen() throws {
        let root = Self.scratch()
        try OwnerOnly.makeDirectory(root)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/log"
        let created = FileManager.default.createFile(
            atPath: path, contents: Data("old\n".utf8), attributes: [.posixPermissions: 0o666])
        #expect(created)
        #expect(OwnerOnly.isOpenToOthers(path))
        let fd = try OwnerOnly.openForWriting(path)
        close(fd)
        #expect(OwnerOnly.mode(of: path) == 0o600)
        #expect(!OwnerOnly.isOpenToOthers(path))
        try OwnerOnly.write(Array("secret\n".utf8), to: root + "/key")
        #expect(OwnerOnly.mode(of: root + "/key") == 0o600)
        #expect(FileManager.default.contents(atPath: root + "/key") == Data("secret\n".utf8))
    }

    @Test func aFailureNamesThePathAndTheReason() {
        #expect(throws: OwnerOnly.Problem.self) { try OwnerOnly.openForWriting("/nonexistent/dir/file") }
        do {
            _ = try OwnerOnly.openForWriting("/nonexistent/dir/file")
        } catch {
            #expect(error.description == "cannot open /nonexistent/dir/file: No such file or directory")
        }
    }
}
