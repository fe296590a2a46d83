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
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var fds: [Int32] = [-1, -1]
        // Close-on-exec, so that a daemon the command leaves running (pg_ctl's server) does not
        // hold the pipe open; dup2 gives the command its own copies without the flag.
        guard pipe(&fds) == 0 else { throw TestServerError("pipe: errno \(errno)") }
        for end in fds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 2)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
        close(fds[1])
        defer { close(fds[0]) }
        guard spawned == 0 else { throw TestServerError("\(arguments[0]): errno \(spawned)") }
        var output = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fds[0], &buffer, buffer.count)
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
