#if canImport(Glibc)
    import Glibc
#endif

/// A timer the lifecycle asks for: what is due when it fires.
///
/// Each names the run it belongs to (a pid, a restart's number), so that a timer that fires
/// after what it watched has moved on — cancelled too late, or a process that exited and started
/// again — is recognised as stale and changes nothing.
enum LifecycleTimer: Hashable, Sendable {
    /// `process` is due to start again after its backoff; `restart` is its restart count then.
    case restart(process: String, restart: Int)
    /// `process` (running as `pid`) has had its `ready_timeout_s` to report that it is ready.
    case readiness(process: String, pid: pid_t)
    /// `process` (running as `pid`) has had its `stop_timeout_s` to exit after SIGTERM.
    case stop(process: String, pid: pid_t)
    /// The supervisor's own events have had their time to reach the bus before it is stopped.
    case drain
}
