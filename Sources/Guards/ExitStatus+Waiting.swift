#if canImport(Glibc)
    import Glibc
#endif

extension ExitStatus {
    /// Blocks until the child `pid` has ended and reaps it: how it ended. Nil when it cannot be
    /// waited for (ECHILD: already reaped, or never a child of this process).
    /// Blocks its thread: call it on a thread of its own (``OwnThread``), never on the
    /// cooperative pool.
    public static func waitFor(child pid: pid_t) -> ExitStatus? {
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 {
            guard errno == EINTR else { return nil }
        }
        return ExitStatus(waitStatus: raw)
    }

    /// Blocks until the child `pid` has ended, and leaves it unreaped (a zombie): how it ended.
    /// Until ``reap(_:)``, the id stays this child's, so a signal sent to it by someone who has
    /// not yet heard of the end reaches nothing, never a new process the system gave the id to.
    /// Nil as in ``waitFor(child:)``. Blocks its thread, as that does.
    public static func waitForEnd(ofChild pid: pid_t) -> ExitStatus? {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 {
            guard errno == EINTR else { return nil }
        }
        let status = info._sifields._sigchld.si_status
        // CLD_EXITED carries the exit code; CLD_KILLED and CLD_DUMPED the signal.
        return info.si_code == Int32(CLD_EXITED) ? .code(status) : .signal(status)
    }

    /// How the child `pid` ended if it has, reaping it; nil while it runs (or when it is not a
    /// child of this process). Never blocks.
    public static func ifEnded(child pid: pid_t) -> ExitStatus? {
        var raw: Int32 = 0
        while true {
            let answer = waitpid(pid, &raw, WNOHANG)
            if answer == pid { return ExitStatus(waitStatus: raw) }
            guard answer < 0 && errno == EINTR else { return nil }
        }
    }

    /// Reaps the child `pid` that ``waitForEnd(ofChild:)`` saw end: its id goes back to the
    /// system. Call it once nothing will signal `pid` again. Never blocks (the child is a
    /// zombie already), so it may run anywhere, under a lock or on the cooperative pool.
    public static func reap(_ pid: pid_t) {
        _ = ifEnded(child: pid)
    }
}
