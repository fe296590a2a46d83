import Guards

#if canImport(Glibc)
    import Glibc
#endif

/// A server a benchmark starts (through ``ProcessSpawn``, the one way a process is started) and
/// ends by its pid, waiting for it.
final class BenchmarkChild {
    let pid: pid_t
    let name: String
    private var ended: ExitStatus?

    init(_ spawn: ProcessSpawn) throws {
        name = spawn.executable
        do {
            pid = try spawn.spawn()
        } catch {
            throw CLIFailure(error.description)
        }
    }

    /// How it ended, if it has, without waiting.
    var exit: ExitStatus? {
        if ended == nil { ended = ExitStatus.ifEnded(child: pid) }
        return ended
    }

    /// Sends `signal` unless it has ended, and waits until it has.
    func end(_ signal: Int32) {
        guard exit == nil else { return }
        kill(pid, signal)
        ended = ExitStatus.waitFor(child: pid) ?? .unknown
    }
}
