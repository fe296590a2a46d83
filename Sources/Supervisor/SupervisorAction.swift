import BureauSchemas

#if canImport(Glibc)
    import Glibc
#endif

/// What the lifecycle asks the supervisor to do: the only effects there are.
///
/// ``DeploymentLifecycle`` decides; ``Supervisor`` performs each action in order and feeds
/// back what came of it (a pid, an exit, a timer firing) as the lifecycle's next input.
enum SupervisorAction: Equatable, Sendable {
    /// Start `process` as `bureau arguments…` (readiness already substituted); answer with
    /// `launched` or `launchFailed`.
    case spawn(process: String, arguments: [String])
    /// Send `signal` to `pid`.
    case signal(pid: pid_t, signal: Int32)
    /// Feed `timer` back as `timerFired` once `after` has passed, unless cancelled first.
    case scheduleTimer(after: Duration, timer: LifecycleTimer)
    case cancelTimer(LifecycleTimer)
    /// Put `ProcessStarted` / `ProcessExited` on the bus (queued while the bus is down).
    case publish(ProcessEvent)
    /// A line for the supervisor's log (and the terminal when it streams output), about
    /// `process` when it names one.
    case say(String, process: String?)
    /// `process` failed `failures` times in a row and is left stopped: an error in the
    /// supervisor's log, and an `ErrorRaised` on the bus (queued like the process events).
    case reportCrashLoop(process: String, failures: Int)
    /// The bus is ready: start publishing the supervisor's own events.
    case connectEvents
    /// Publish what is queued before the bus stops; answer with `eventsDrained`.
    case drainEvents
    /// Every process is ready, `took` after the deployment began.
    case deploymentReady(took: Duration)
    /// The deployment could not start; the supervisor stops what runs and reports `error`.
    case deploymentFailed(SupervisorError)
    /// Every process has stopped: the supervisor may return.
    case deploymentStopped

    /// The supervisor's events about processes, as they go on the bus.
    enum ProcessEvent: Equatable, Sendable {
        case started(Bureau_System_ProcessStarted)
        case exited(Bureau_System_ProcessExited)
    }

    static func say(_ line: String) -> SupervisorAction { .say(line, process: nil) }
}
