import Foundation
import Guards

#if canImport(Glibc)
    import Glibc
#endif

/// A program run to its end for a test's setup (`ip`, `tc`, `initdb`, `pg_ctl`), its output
/// captured.
public enum SystemCommand {
    /// Runs a command to its end; throws with its output if it fails.
    ///
    /// - Parameter input: what the command reads on its standard input (else /dev/null).
    @discardableResult
    public static func run(_ arguments: [String], input: Data? = nil) throws -> String {
        let (ended, text) = try outcome(arguments, input: input)
        guard ended.succeeded else {
            throw TestServerError("\(arguments.joined(separator: " ")) \(ended.text)\(text.isEmpty ? "" : ": \(text)")")
        }
        return text
    }

    /// Runs a command to its end; how it ended and its output (standard output and error together).
    ///
    /// - Parameter input: what the command reads on its standard input (else /dev/null). It is
    ///   written to a file first, so that a command that answers before reading all of it
    ///   cannot block on a full pipe while this waits to write the rest.
    public static func outcome(_ arguments: [String], input: Data? = nil) throws -> (ExitStatus, String) {
        guard let program = arguments.first else { throw TestServerError("no command to run") }
        var stdin = "/dev/null"
        if let input {
            stdin = FileManager.default.temporaryDirectory.appendingPathComponent("input-\(UUID().uuidString)").path
            guard FileManager.default.createFile(atPath: stdin, contents: input) else {
                throw TestServerError("could not write \(program)'s input to \(stdin)")
            }
        }
        defer { if input != nil { try? FileManager.default.removeItem(atPath: stdin) } }
        // Close-on-exec, so that a daemon the command leaves running (pg_ctl's server) does not
        // hold the pipe open; the duplicates give the command its own copies without the flag.
        let fds: (read: Int32, write: Int32)
        let pid: pid_t
        do throws(ProcessSpawn.Failure) {
            fds = try ProcessSpawn.pipe()
            var spawn = ProcessSpawn(executable: program, arguments: Array(arguments.dropFirst()))
            spawn.fileActions = [
                .open(0, path: stdin, flags: O_RDONLY), .duplicate(fds.write, to: 1), .duplicate(fds.write, to: 2),
                .close(fds.read),
            ]
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
        guard let status = ExitStatus.waitFor(child: pid) else {
            throw TestServerError("cannot wait for \(program) (pid \(pid)): errno \(errno)")
        }
        return (status, String(decoding: output, as: UTF8.self))
    }
}
