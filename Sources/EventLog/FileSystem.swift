#if canImport(Glibc)
    import Glibc
#endif

/// The file system calls the event log makes, for its segments, indexes, metadata files and
/// reducer snapshots: the seam a test uses to make any of them fail.
///
/// ``PosixFileSystem`` makes the real calls; ``FaultInjectingFileSystem`` wraps it and fails the
/// Nth call with `ENOSPC`, `EIO`, a short write, a failed `fdatasync` or a crash. Each method
/// is one system call, with its meaning: `write` may write fewer bytes than asked, and the
/// caller loops (see ``PosixFile``).
public protocol FileSystem: Sendable {
    /// `open(2)`; returns the descriptor.
    func open(_ path: String, flags: Int32, mode: mode_t) throws(SystemError) -> Int32
    /// `close(2)`; errors are ignored, as nothing can be done about them.
    func close(_ descriptor: Int32)
    /// One `pread(2)`: how many bytes were read, 0 at the end of the file.
    func read(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64
    ) throws(SystemError)
        -> Int
    /// One `pwrite(2)`: how many bytes were written, possibly fewer than given.
    func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(SystemError) -> Int
    /// `fdatasync(2)`. A failure must never be answered by calling it again (see ``PosixFile``).
    func dataSync(_ descriptor: Int32) throws(SystemError)
    /// `fsync(2)`, for directories (so that a created or renamed entry survives a power cut).
    func sync(_ descriptor: Int32) throws(SystemError)
    /// `ftruncate(2)`.
    func truncate(_ descriptor: Int32, to size: Int64) throws(SystemError)
    /// The size of an open file (`fstat(2)`).
    func size(of descriptor: Int32) throws(SystemError) -> Int64
    /// `fchmod(2)`: sets the exact mode, whatever the umask was at creation.
    func setMode(_ descriptor: Int32, _ mode: mode_t) throws(SystemError)
    /// `rename(2)`.
    func rename(_ from: String, to: String) throws(SystemError)
    /// `unlink(2)`.
    func remove(_ path: String) throws(SystemError)
    /// `mkdir(2)` of one directory; `EEXIST` is an error like any other.
    func makeDirectory(_ path: String, mode: mode_t) throws(SystemError)
    /// `chmod(2)` of a directory or file by path.
    func setMode(path: String, _ mode: mode_t) throws(SystemError)
    /// The names in a directory, without `.` and `..`.
    func list(_ directory: String) throws(SystemError) -> [String]
    /// `flock(2)` with `LOCK_EX | LOCK_NB`; `EWOULDBLOCK` if another holds it.
    func lockExclusively(_ descriptor: Int32) throws(SystemError)
    /// `flock(2)` with `LOCK_UN`: releases the lock even where a forked child shares the descriptor.
    func unlock(_ descriptor: Int32)
    /// Whether a path exists (`access(2)` with `F_OK`).
    func exists(_ path: String) -> Bool
}
