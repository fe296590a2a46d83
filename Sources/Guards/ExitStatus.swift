/// How a child process ended: with an exit code, or killed by a signal; shown to people as
/// "exit code 1" or "signal SIGKILL (9)", never as the raw status `waitpid` reports.
public enum ExitStatus: Sendable, Equatable, CustomStringConvertible {
    case code(Int32)
    case signal(Int32)

    /// Reads a status as `waitpid` reports it (a process that ended; a core dump is still its signal).
    public init(waitStatus status: Int32) {
        let signal = status & 0x7F
        self = signal == 0 ? .code((status >> 8) & 0xFF) : .signal(signal)
    }

    /// From the two fields `ProcessExited` carries: a signal other than 0 ended the process,
    /// else it exited with `exitCode`.
    public init(exitCode: Int32, signal: Int32) {
        self = signal != 0 ? .signal(signal) : .code(exitCode)
    }

    /// How a process ended when that could not be read (it was not this process's to wait
    /// for): exit code -1, which no process can exit with, and so never a success. Whoever
    /// gives it says why in the log.
    public static let unknown = ExitStatus.code(-1)

    /// Whether the process finished its work: exit code 0. Anything else is a failure.
    public var succeeded: Bool { self == .code(0) }

    /// The exit code, 0 when a signal ended the process (as `ProcessExited` carries it).
    public var exitCode: Int32 {
        guard case .code(let code) = self else { return 0 }
        return code
    }

    /// The signal that ended the process, 0 when it exited.
    public var signal: Int32 {
        guard case .signal(let signal) = self else { return 0 }
        return signal
    }

    /// "exit code 1", "signal SIGKILL (9)".
    public var description: String {
        switch self {
        case .code(-1): "an unknown status"
        case .code(let code): "exit code \(code)"
        case .signal(let signal): "signal \(Self.name(ofSignal: signal)) (\(signal))"
        }
    }

    /// "ended with exit code 1", "ended by signal SIGKILL (9)": after a process's name.
    public var text: String {
        switch self {
        case .code: "ended with \(description)"
        case .signal: "ended by \(description)"
        }
    }

    /// A signal's name on Linux, "SIGKILL"; "SIGRTMIN+2" for a real-time one (glibc's SIGRTMIN
    /// is 34), "SIG?" for a number no signal has.
    public static func name(ofSignal signal: Int32) -> String {
        if signal >= 1, Int(signal) < names.count { return "SIG" + names[Int(signal)] }
        if (34...64).contains(signal) { return signal == 34 ? "SIGRTMIN" : "SIGRTMIN+\(signal - 34)" }
        return "SIG?"
    }

    /// The signal `text` names: a number (9), a name (KILL, SIGKILL, kill); nil for anything
    /// else, real-time signals included (no Bureau process uses them).
    public static func signal(named text: String) -> Int32? {
        if let number = Int32(text) { return (1..<Int32(names.count)).contains(number) ? number : nil }
        var name = text.uppercased()
        if name.hasPrefix("SIG") { name.removeFirst(3) }
        guard !name.isEmpty, let index = names.firstIndex(of: name) else { return nil }
        return Int32(index)
    }

    /// Linux's standard signals, by number (x86, ARM and most others; index 0 is no signal).
    private static let names = [
        "", "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2", "PIPE",
        "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG", "XCPU", "XFSZ", "VTALRM",
        "PROF", "WINCH", "IO", "PWR", "SYS",
    ]
}
