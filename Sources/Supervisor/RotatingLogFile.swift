import EventLog
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
/// cannot be opened is said once at error level in `logger`; its lines are then dropped.
final class RotatingLogFile: Sendable {
    let path: String
    private let maxBytes: Int
    private let logger: Logger
    private let state: Mutex<(fd: Int32, size: Int)>
    static let kept = 3

    init(path: String, maxBytes: Int, logger: Logger) {
        self.path = path
        self.maxBytes = maxBytes
        self.logger = logger
        let fd = Self.open(path, truncate: false, logger: logger)
        var info = stat()
        let size = fd >= 0 && fstat(fd, &info) == 0 ? Int(info.st_size) : 0
        state = Mutex((fd, size))
    }

    func write(_ bytes: [UInt8]) {
        state.withLock { state in
            guard state.fd >= 0 else { return }
            if state.size + bytes.count > maxBytes && state.size > 0 {
                close(state.fd)
                for index in stride(from: Self.kept - 1, through: 1, by: -1) {
                    rename("\(path).\(index)", "\(path).\(index + 1)")
                }
                rename(path, "\(path).1")
                state.fd = Self.open(path, truncate: true, logger: logger)
                state.size = 0
            }
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { Glibc.write(state.fd, $0.baseAddress, $0.count) }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { break }
                offset += written
            }
            state.size += offset
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
