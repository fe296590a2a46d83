import EventLog
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The child's side of the lifeline: stop when the supervisor that started this process dies.
public enum Lifeline {
    /// Watches the descriptor named by `BUREAU_LIFELINE_FD`, if any: at end-of-file (the
    /// supervisor is gone) it sends this process SIGTERM, and SIGKILL 10 s later if still alive.
    public static func watchIfInherited() {
        guard let text = ProcessInfo.processInfo.environment["BUREAU_LIFELINE_FD"], let fd = Int32(text), fd > 2,
            fcntl(fd, F_GETFD) >= 0
        else { return }
        // Not passed on to this process's own children.
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        unsetenv("BUREAU_LIFELINE_FD")
        Thread.detachNewThread {
            var byte: UInt8 = 0
            while true {
                let count = read(fd, &byte, 1)
                if count < 0 && errno == EINTR { continue }
                if count == 0 { break }
                if count < 0 {
                    // Not the supervisor's end: a descriptor that cannot be read says nothing
                    // about it, and stopping here would take a healthy process down.
                    let reason = SystemError.last
                    let said =
                        "bureau: cannot read the lifeline (fd \(fd)): \(reason); "
                        + "this process will not stop with its supervisor\n"
                    FileHandle.standardError.write(Data(said.utf8))
                    return
                }
            }
            kill(getpid(), SIGTERM)
            sleep(10)
            kill(getpid(), SIGKILL)
        }
    }
}
