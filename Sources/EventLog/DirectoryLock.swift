#if canImport(Glibc)
    import Glibc
#endif

/// An exclusive lock on a directory, held by one process at a time (`flock` on a `LOCK` file).
///
/// The lock file records the holder's pid and command line, so a refusal can say who holds
/// it. The kernel releases the lock when the holder exits, however it exits.
public final class DirectoryLock {
    public let directory: String
    private let file: PosixFile

    /// Takes the lock or throws ``EventLogError/locked(directory:pid:command:)`` naming the holder.
    ///
    /// - Parameter fileName: the lock file in `directory`; several locks can share a directory.
    public init(directory: String, fileName: String = "LOCK", fileSystem: any FileSystem = PosixFileSystem()) throws {
        self.directory = directory
        let path = directory + "/" + fileName
        file = try PosixFile(path: path, flags: O_RDWR | O_CREAT, mode: 0o600, fileSystem: fileSystem)
        do {
            try fileSystem.lockExclusively(file.descriptor)
        } catch {
            guard error.code == EWOULDBLOCK else {
                throw EventLogError.io(operation: "flock", path: path, errno: error.code)
            }
            let holder = DirectoryLock.holder(of: directory, fileName: fileName)
            throw EventLogError.locked(directory: directory, pid: holder.pid, command: holder.command)
        }
        // Who holds it is for messages only: on a full disk the lock is still taken.
        let pid = getpid()
        let text = Array("\(pid)\n\(DirectoryLock.commandLine(of: pid) ?? "")\n".utf8)
        if (try? text.withUnsafeBytes({ try file.write($0, at: 0) })) != nil {
            try? file.truncate(to: Int64(text.count))
        }
    }

    // A lock dropped without release() (a writer dropped as a crash leaves it) is released the
    // same way: closing alone leaves it held while a child forked meanwhile, between its fork
    // and its exec, shares the descriptor. Unlocking any descriptor of the file releases it.
    deinit { release() }

    /// Releases the lock.
    public func release() {
        // Unlocked before closing: a child forked meanwhile shares the descriptor until it execs,
        // and would otherwise hold the lock that long.
        if file.descriptor >= 0 { file.fileSystem.unlock(file.descriptor) }
        file.close()
    }

    /// Who holds the lock on `directory`, if anyone: the pid and command it recorded.
    public static func holder(of directory: String, fileName: String = "LOCK") -> (pid: Int32?, command: String?) {
        guard
            let bytes = try? PosixFile.readAll(
                directory + "/" + fileName, fileSystem: PosixFileSystem(), limit: 1 << 16)
        else { return (nil, nil) }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let pid = lines.first.flatMap { Int32($0) }
        let recorded = lines.count > 1 && !lines[1].isEmpty ? String(lines[1]) : nil
        return (pid, pid.flatMap { commandLine(of: $0) } ?? recorded)
    }

    /// Whether some process holds the lock on `directory` now. No lock file means no writer;
    /// a lock file that cannot be opened (permissions, no descriptors left) throws, since the
    /// answer would be a guess that decides whether a log's tail is a writer's work in progress.
    public static func isHeld(_ directory: String) throws -> Bool {
        let file: PosixFile
        do {
            file = try PosixFile(path: directory + "/LOCK", flags: O_RDONLY, fileSystem: PosixFileSystem())
        } catch EventLogError.io(_, _, ENOENT) {
            return false
        }
        if flock(file.descriptor, LOCK_SH | LOCK_NB) == 0 {
            flock(file.descriptor, LOCK_UN)
            return false
        }
        let code = errno
        guard code == EWOULDBLOCK else {
            throw EventLogError.io(operation: "flock", path: directory + "/LOCK", errno: code)
        }
        return true
    }

    /// The command line of a running process, from /proc.
    static func commandLine(of pid: Int32) -> String? {
        guard let bytes = try? PosixFile.readAll("/proc/\(pid)/cmdline", fileSystem: PosixFileSystem(), limit: 1 << 16),
            !bytes.isEmpty
        else { return nil }
        return bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }.joined(separator: " ")
    }
}
