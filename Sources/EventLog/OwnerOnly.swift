#if canImport(Glibc)
    import Glibc
#endif

/// Files and directories only their owner can read: files 0600, directories 0700, whatever
/// the umask (the mode is set after creation, not left to `open`'s and `mkdir`'s mode argument,
/// which the umask narrows or a later `chmod` of the creator widens).
///
/// The one place these modes are made: for the log, its metadata and snapshots (through a
/// ``FileSystem``, so that tests can make the calls fail), and for what the tool writes beside
/// them: the supervisor's process logs, the front-end's log, the control socket, secret keys.
public enum OwnerOnly {
    /// A system call that failed, on which path, and why.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public let operation: String
        public let path: String
        public let code: Int32
        public var reason: String { String(cString: strerror(code)) }

        init(_ operation: String, _ path: String, errno code: Int32) {
            self.operation = operation
            self.path = path
            self.code = code
        }

        public var description: String { "cannot \(operation) \(path): \(reason)" }
    }

    /// Read and write for the owner only.
    public static let fileMode: mode_t = 0o600
    /// Read, write and enter for the owner only.
    public static let directoryMode: mode_t = 0o700

    /// Creates `path` and any missing parents; each directory created, and `path` itself, is
    /// left 0700. Existing parents keep their mode.
    public static func makeDirectory(_ path: String, fileSystem: any FileSystem = PosixFileSystem()) throws(Problem) {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if fileSystem.exists(current) { continue }
            do {
                try fileSystem.makeDirectory(current, mode: directoryMode)
            } catch  where error.code == EEXIST {
                continue
            } catch {
                throw Problem("create the directory", current, errno: error.code)
            }
            do {
                try fileSystem.setMode(path: current, directoryMode)
            } catch {
                throw Problem("chmod", current, errno: error.code)
            }
        }
        do {
            try fileSystem.setMode(path: path, directoryMode)
        } catch {
            throw Problem("chmod", path, errno: error.code)
        }
    }

    /// Opens `path` for writing (created if missing, appended to unless `truncate`), mode 0600
    /// before anything is written; returns the file descriptor, close-on-exec.
    public static func openForWriting(_ path: String, truncate: Bool = false) throws(Problem) -> Int32 {
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : O_APPEND), fileMode)
        guard fd >= 0 else { throw Problem("open", path, errno: errno) }
        guard fchmod(fd, fileMode) == 0 else {
            let code = errno
            close(fd)
            throw Problem("chmod", path, errno: code)
        }
        return fd
    }

    /// Writes `bytes` to a new or truncated file at `path`, mode 0600 before the first byte.
    public static func write(_ bytes: [UInt8], to path: String) throws(Problem) {
        let fd = try openForWriting(path, truncate: true)
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw Problem("write", path, errno: errno) }
            offset += written
        }
    }

    /// Makes an existing file (a socket, say) 0600.
    public static func restrict(_ path: String) throws(Problem) {
        guard chmod(path, fileMode) == 0 else { throw Problem("chmod", path, errno: errno) }
    }

    /// The permission bits of `path` (e.g. 0o600), or nil if it cannot be examined.
    public static func mode(of path: String) -> mode_t? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_mode & 0o7777
    }

    /// Whether anyone but the owner may read, write or enter `path`.
    public static func isOpenToOthers(_ path: String) -> Bool {
        guard let mode = mode(of: path) else { return false }
        return mode & 0o077 != 0
    }
}
