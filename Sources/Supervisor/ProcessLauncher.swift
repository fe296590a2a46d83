import Foundation
import Guards

#if canImport(Glibc)
    import Glibc
#endif

/// Starts `bureau` children (through ``ProcessSpawn``, in Guards).
///
/// The child gets: /dev/null (or the terminal) on stdin; its output on a pipe; the write end of
/// a readiness pipe as fd 3 (with `--ready-fd 3`); the read end of the supervisor's lifeline
/// as fd 4 (`BUREAU_LIFELINE_FD=4`), which reaches end-of-file when the supervisor dies, even by
/// SIGKILL, so the child stops too. Signals the supervisor ignores or handles are reset to
/// their defaults in the child.
enum ProcessLauncher {
    static let readyFD: Int32 = 3
    static let lifelineFD: Int32 = 4

    static func launch(
        executable: String, arguments: [String], environment: [String: String], readiness: Bool, lifeline: Int32,
        foreground: Bool = false
    ) throws(LaunchError) -> LaunchedProcess {
        var spawn = ProcessSpawn(executable: executable, arguments: arguments)
        var toClose: [Int32] = []
        defer { for fd in toClose { close(fd) } }
        // The ends this process keeps; closed again if the child does not start.
        var kept: [Int32] = []
        do throws(ProcessSpawn.Failure) {
            var output: Int32?
            if !foreground {
                let ends = try ProcessSpawn.pipe()
                toClose.append(ends.write)
                kept.append(ends.read)
                output = ends.read
                spawn.fileActions += [
                    .open(0, path: "/dev/null", flags: O_RDONLY), .duplicate(ends.write, to: 1),
                    .duplicate(ends.write, to: 2),
                ]
                // A group of its own: Ctrl-C reaches the supervisor only, which stops children in order.
                spawn.ownProcessGroup = true
            }
            var readyEnd: Int32?
            if readiness {
                let ends = try ProcessSpawn.pipe()
                toClose.append(ends.write)
                kept.append(ends.read)
                readyEnd = ends.read
                spawn.fileActions.append(.duplicate(ends.write, to: readyFD))
                spawn.arguments += ["--ready-fd", "\(readyFD)"]
            }
            spawn.fileActions.append(.duplicate(lifeline, to: lifelineFD))
            spawn.defaultSignals = [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD, SIGQUIT]
            spawn.environment = environment
            spawn.environment["BUREAU_LIFELINE_FD"] = "\(lifelineFD)"
            let pid = try spawn.spawn()
            return LaunchedProcess(pid: pid, output: output, readiness: readyEnd)
        } catch {
            for fd in kept { close(fd) }
            throw LaunchError(description: error.description)
        }
    }
}
