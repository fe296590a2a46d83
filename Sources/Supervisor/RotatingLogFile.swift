import EventLog
import Guards
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A process's output file under the data directory, rotated at a size.
///
/// `NAME.log` is written; at `maxBytes` it becomes `NAME.log.1` (older ones shift up to
/// `NAME.log.3`, the oldest is dropped) and a new `NAME.log` starts. Every file is owner-only
/// (0600, whatever the umask): processes log what they do with people's money. A file that
/// cannot be opened is said once at error level in `logger`; its lines are then dropped. A
/// write that fails (a full disk) is said at error level once, when the failures start, and
/// how many writes were lost when they end; a rotation that fails is said once, and the file it
/// could not move grows on rather than being truncated.
final class RotatingLogFile: Sendable {
    let path: String
    private let maxBytes: Int
    private let logger: Logger
    /// `rotates` turns false for good once a rotation failed: trying again at every line would
    /// shift the older files each time and drop them.
    private let state: Mutex<(fd: Int32, size: Int, failures: FailureStreak, rotates: Bool)>
    static let kept = 3

    init(path: String, maxBytes: Int, logger: Logger) {
        self.path = path
        self.maxBytes = maxBytes
        self.logger = logger
        let fd = Self.open(path, truncate: false, logger: logger)
        var info = stat()
        let size = fd >= 0 && fstat(fd, &info) == 0 ? Int(info.st_size) : 0
        state = Mutex((fd, size, FailureStreak(), true))
    }

    func write(_ bytes: [UInt8]) {
        state.withLock { state in
            guard state.fd >= 0 else { return }
            if state.rotates && state.size + bytes.count > maxBytes && state.size > 0 {
                close(state.fd)
                for index in stride(from: Self.kept - 1, through: 1, by: -1) {
                    rename("\(path).\(index)", "\(path).\(index + 1)")
                }
                // Gone (removed by hand to free space): nothing to move, and a new file starts.
                if rename(path, "\(path).1") == 0 || errno == ENOENT {
                    state.fd = Self.open(path, truncate: true, logger: logger)
                    state.size = 0
                } else {
                    let reason = SystemError.last
                    logger.error(
                        "a process log file could not be rotated: it grows past its size from now on",
                        metadata: ["supervisor.log": "\(path)", "supervisor.error": "\(reason)"])
                    state.rotates = false
                    state.fd = Self.open(path, truncate: false, logger: logger)
                }
                guard state.fd >= 0 else { return }
            }
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { Glibc.write(state.fd, $0.baseAddress, $0.count) }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else {
                    let reason = written < 0 ? "\(SystemError.last)" : "nothing written"
                    if state.failures.failed() {
                        logger.error(
                            "a process log file cannot be written: its output is lost until it can",
                            metadata: [
                                "supervisor.log": "\(path)",
                                "supervisor.error": "\(reason)",
                            ])
                    }
                    state.size += offset
                    return
                }
                offset += written
            }
            state.size += offset
            let lost = state.failures.succeeded()
            if lost > 0 {
                logger.notice(
                    "a process log file is written again; \(counted(lost, "write")) were lost",
                    metadata: ["supervisor.log": "\(path)"])
            }
        }
    }

    /// The descriptor of `path` opened for writing, or -1, said at error level, when it cannot be.
    private static func open(_ path: String, truncate: Bool, logger: Logger) -> Int32 {
        do {
            return try OwnerOnly.openForWriting(path, truncate: truncate)
        } catch {
            logger.error(
                "a process log file could not be opened: its output is not kept",
                metadata: ["supervisor.log": "\(path)", "supervisor.error": "\(error)"])
            return -1
        }
    }

    deinit {
        state.withLock { if $0.fd >= 0 { close($0.fd) } }
    }
}
