#if canImport(Glibc)
    import Glibc
#endif

extension ExitStatus {
    /// Blocks until the child `pid` has ended and reaps it: how it ended. Nil when `pid` is not
    /// a child of this process that can be waited for (ECHILD: already reaped, or never ours).
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

    /// Reaps the child `pid` that ``waitForEnd(ofChild:)`` saw end: its id goes back to the
    /// system. Call it once nothing will signal `pid` again.
    public static func reap(_ pid: pid_t) {
        _ = waitFor(child: pid)
    }
}
