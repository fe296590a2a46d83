import Foundation
import Guards
import Testing

struct BoundedFileTests {
    static func temporaryFile(_ bytes: Int) throws -> String {
        let path = NSTemporaryDirectory() + "bounded-\(UUID().uuidString)"
        try Data(repeating: UInt8(ascii: "a"), count: bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func aFileAtTheLimitIsReadWhole() throws {
        let path = try Self.temporaryFile(1024)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try BoundedFile.read(path, limit: 1024).count == 1024)
    }

    @Test func aFileOverTheLimitIsRefusedNamingItAndTheLimit() throws {
        let path = try Self.temporaryFile(1025)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: BoundedFile.Problem.tooLarge(path: path, limit: 1024)) {
            try BoundedFile.read(path, limit: 1024)
        }
        let message = BoundedFile.Problem.tooLarge(path: path, limit: 1 << 20).description
        #expect(message == "\(path) is larger than 1 MiB, the limit")
    }

    @Test func aDeviceThatNeverEndsIsRefusedAfterTheLimit() {
        #expect(throws: BoundedFile.Problem.tooLarge(path: "/dev/zero", limit: 1 << 20)) {
            try BoundedFile.read("/dev/zero", limit: 1 << 20)
        }
    }

    @Test func aMissingFileSaysWhy() {
        #expect(throws: BoundedFile.Problem.unreadable(path: "/nonexistent/x", reason: "No such file or directory")) {
            try BoundedFile.read("/nonexistent/x", limit: 10)
        }
    }

    @Test func textMustBeUTF8() throws {
        let path = NSTemporaryDirectory() + "bounded-\(UUID().uuidString)"
        try Data([0x61, 0xFF, 0x62]).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: BoundedFile.Problem.notText(path: path)) { try BoundedFile.text(path, limit: 10) }
    }
}
