import Foundation
import Guards

#if canImport(Glibc)
    import Glibc
#endif

/// A program run to its end for a test's setup (`ip`, `tc`, `initdb`, `pg_ctl`), its output
/// captured.
public enum SystemCommand {
    /// Runs a command to its end; throws with its output if it fails.
    @discardableResult
    public static func run(_ arguments: [String]) throws -> String {
        guard let program = arguments.first else { throw TestServerError("no command to run") }
        // Close-on-exec, so that a daemon the command leaves running (pg_ctl's server) does not
        // hold the pipe open; the duplicates give the command its own copies without the flag.
        let fds: (read: Int32, write: Int32)
        let pid: pid_t
        do throws(ProcessSpawn.Failure) {
            fds = try ProcessSpawn.pipe()
            var spawn = ProcessSpawn(executable: program, arguments: Array(arguments.dropFirst()))
            spawn.fileActions = [.duplicate(fds.write, to: 1), .duplicate(fds.write, to: 2), .close(fds.read)]
            defer { close(fds.write) }
            do {
                pid = try spawn.spawn()
            } catch {
                close(fds.read)
                throw error
            }
        } catch {
            throw TestServerError(error.description)
        }
        defer { close(fds.read) }
        var output = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fds.read, &buffer, buffer.count)
            if count <= 0 { break }
            output += buffer[0..<count]
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = String(decoding: output, as: UTF8.self)
        let ended = ExitStatus(waitStatus: status)
        guard ended.succeeded else {
            throw TestServerError("\(arguments.joined(separator: " ")) \(ended.text)\(text.isEmpty ? "" : ": \(text)")")
        }
        return text
    }
}
