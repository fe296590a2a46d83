#if canImport(Glibc)
    import Glibc
#endif

/// How a child process ended: with an exit code, or killed by a signal.
public enum ExitStatus: Sendable, Equatable {
    case code(Int32)
    case signal(Int32)

    /// Reads a status as `waitpid` reports it.
    public init(waitStatus status: Int32) {
        let signal = status & 0x7F
        self = signal == 0 ? .code((status >> 8) & 0xFF) : .signal(signal)
    }

    /// Whether the process finished its work: exit code 0. Anything else is a failure.
    var succeeded: Bool { self == .code(0) }

    /// The exit code, 0 when a signal ended the process (as `ProcessExited` carries it).
    var exitCode: Int32 {
        guard case .code(let code) = self else { return 0 }
        return code
    }

    /// The signal that ended the process, 0 when it exited.
    var signal: Int32 {
        guard case .signal(let signal) = self else { return 0 }
        return signal
    }

    /// "exited with code 1", "was killed by signal 9".
    var text: String {
        switch self {
        case .code(let code): "exited with code \(code)"
        case .signal(let signal): "was killed by signal \(signal)"
        }
    }
}
