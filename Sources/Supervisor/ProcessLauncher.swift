import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Starts `bureau` children with posix_spawn.
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
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var toClose: [Int32] = []
        defer { for fd in toClose { close(fd) } }
        var output: Int32?
        if !foreground {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            let ends = try pipePair()
            posix_spawn_file_actions_adddup2(&actions, ends.write, 1)
            posix_spawn_file_actions_adddup2(&actions, ends.write, 2)
            toClose.append(ends.write)
            output = ends.read
        }
        var arguments = arguments
        var readyEnd: Int32?
        if readiness {
            let ends = try pipePair()
            posix_spawn_file_actions_adddup2(&actions, ends.write, readyFD)
            toClose.append(ends.write)
            readyEnd = ends.read
            arguments += ["--ready-fd", "\(readyFD)"]
        }
        posix_spawn_file_actions_adddup2(&actions, lifeline, lifelineFD)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD, SIGQUIT] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var flags = Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        if !foreground {
            // A group of its own: Ctrl-C reaches the supervisor only, which stops children in order.
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        var merged = ProcessInfo.processInfo.environment
        for (key, value) in environment { merged[key] = value }
        merged["BUREAU_LIFELINE_FD"] = "\(lifelineFD)"
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            if let output { close(output) }
            if let readyEnd { close(readyEnd) }
            throw LaunchError(description: "could not start \(executable): \(String(cString: strerror(result)))")
        }
        return LaunchedProcess(pid: pid, output: output, readiness: readyEnd)
    }

    /// A pipe whose ends are closed on exec, so that no other child holds them open.
    static func pipePair() throws(LaunchError) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            throw LaunchError(description: "pipe: \(String(cString: strerror(errno)))")
        }
        // Supervisor threads spawn concurrently, so a child may briefly inherit another's pipe;
        // CLOEXEC closes it at exec, before any of the child's code runs.
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return (ends[0], ends[1])
    }
}
