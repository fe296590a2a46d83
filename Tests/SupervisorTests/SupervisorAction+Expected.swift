import BureauSchemas
import Guards

@testable import Supervisor

#if canImport(Glibc)
    import Glibc
#endif

/// The actions a test expects, written as a person reads them.
extension SupervisorAction {
    static func started(_ name: String, pid: pid_t, _ arguments: [String], restarts: UInt32 = 0) -> SupervisorAction {
        var started = Bureau_System_ProcessStarted()
        started.process = name
        started.pid = pid
        started.arguments = arguments
        started.restarts = restarts
        return .publish(.started(started))
    }

    static func exited(
        _ name: String, pid: pid_t, _ status: ExitStatus, restarts: UInt32 = 0, _ message: String
    ) -> SupervisorAction {
        var exited = Bureau_System_ProcessExited()
        exited.process = name
        exited.pid = pid
        exited.exitCode = status.exitCode
        exited.signal = status.signal
        exited.restarts = restarts
        exited.message = message
        return .publish(.exited(exited))
    }

    static func term(_ pid: pid_t) -> SupervisorAction { .signal(pid: pid, signal: SIGTERM) }
    static func kill(_ pid: pid_t) -> SupervisorAction { .signal(pid: pid, signal: SIGKILL) }
}

/// The instant `seconds` after the test's origin: tests give times as distances, the lifecycle
/// only ever subtracts them.
func time(_ seconds: Double) -> ContinuousClock.Instant {
    origin + .milliseconds(Int64((seconds * 1000).rounded()))
}

private let origin = ContinuousClock.now
