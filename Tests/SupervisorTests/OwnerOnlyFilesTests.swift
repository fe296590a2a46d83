import EventLog
import Foundation
import Guards
import TestSupport
import Testing

@testable import Supervisor

#if canImport(Glibc)
    import Glibc
#endif

/// What the supervisor writes outside the log — process logs, the control socket, their
/// directories — is owner-only whatever the umask.
@Suite(.timeLimit(.minutes(3)))
struct OwnerOnlyFilesTests {
    static func mode(_ path: String) -> String {
        OwnerOnly.mode(of: path).map { String($0, radix: 8) } ?? "missing"
    }

    /// `bureau up` under umask 000 (through /bin/sh, so only the child's umask changes).
    @Test func bureauUpUnderAnOpenUmaskLeavesItsFilesOwnerOnly() async throws {
        let directory = try TemporaryDirectory("owner-only")
        let data = directory.file("data")
        try "processes:\n  bus:\n    command: bus\n".write(
            toFile: directory.file("bureau.yaml"), atomically: true, encoding: .utf8)
        let supervisor = try ChildProcess(
            "/bin/sh",
            [
                "-c", "umask 000; exec \"$0\" \"$@\"", BureauExecutable.path, "up", "--no-tui", "--file",
                directory.file("bureau.yaml"), "--data", data,
            ],
            directory: directory.path, name: "up", readiness: true)
        defer { supervisor.signal(SIGKILL) }
        try await supervisor.waitUntilReady(timeout: .seconds(60))
        for path in [data, data + "/logs", data + "/run"] {
            #expect(Self.mode(path) == "700", "\(path)")
        }
        for path in [data + "/logs/supervisor.log", data + "/logs/bus.log", data + "/run/supervisor.sock"] {
            #expect(Self.mode(path) == "600", "\(path)")
        }
        supervisor.signal(SIGTERM)
        #expect(await supervisor.exitCode(within: .seconds(30)) == 0)
    }

    @Test func aRotatedLogAndItsSuccessorStayOwnerOnly() throws {
        let directory = try TemporaryDirectory("rotate")
        let path = directory.file("x.log")
        // Left open by something earlier: the first write closes it.
        #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o666]))
        let file = RotatingLogFile(path: path, maxBytes: 64, logger: TestLogging.logger("supervisor"))
        file.write(Array(String(repeating: "a", count: 60).utf8))
        #expect(Self.mode(path) == "600")
        file.write(Array(String(repeating: "b", count: 60).utf8))
        #expect(Self.mode(path + ".1") == "600")
        #expect(Self.mode(path) == "600")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == String(repeating: "b", count: 60))
    }

    /// A log file removed by hand (to free space) is no rotation failure: a new one starts, and
    /// it goes on rotating, with nothing said at error level.
    @Test func aLogFileRemovedByHandStartsAgainAndGoesOnRotating() throws {
        // Given a process log with lines in it, removed by hand
        let directory = try TemporaryDirectory("removed")
        let path = directory.file("x.log")
        let captured = CapturedLog()
        let file = RotatingLogFile(path: path, maxBytes: 64, logger: captured.logger("supervisor"))
        file.write(Array(String(repeating: "a", count: 60).utf8))
        try FileManager.default.removeItem(atPath: path)
        // When lines past its size come: a new file holds them
        file.write(Array(String(repeating: "b", count: 60).utf8))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == String(repeating: "b", count: 60))
        // Then it rotates again when full
        file.write(Array(String(repeating: "c", count: 60).utf8))
        #expect(try String(contentsOfFile: path + ".1", encoding: .utf8) == String(repeating: "b", count: 60))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == String(repeating: "c", count: 60))
        #expect(captured.lines.filter { $0.level == .error }.isEmpty, "\(captured.lines.map(\.message))")
    }

    /// A log file that cannot be opened is said at error level, once, and its lines are dropped
    /// without harm: not kept silently nowhere.
    @Test func aLogFileThatCannotBeOpenedIsSaidOnce() throws {
        let directory = try TemporaryDirectory("unopenable")
        let captured = CapturedLog()
        let file = RotatingLogFile(
            path: directory.file("missing/x.log"), maxBytes: 64, logger: captured.logger("supervisor"))
        file.write(Array("a line\n".utf8))
        file.write(Array("another\n".utf8))
        let errors = captured.lines.filter { $0.level == .error }
        #expect(errors.count == 1, "\(captured.lines.map(\.message))")
        #expect(errors.first?.message.contains("could not be opened") == true)
        #expect(!FileManager.default.fileExists(atPath: directory.file("missing/x.log")))
    }
}
