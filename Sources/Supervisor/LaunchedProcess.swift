#if canImport(Glibc)
    import Glibc
#endif

/// A child the supervisor started: its pid and the read ends of its pipes.
struct LaunchedProcess: Sendable {
    let pid: pid_t
    /// Standard output and error, merged; nil when the child writes to the supervisor's terminal.
    let output: Int32?
    /// READY arrives here when the child reports readiness.
    let readiness: Int32?
}
