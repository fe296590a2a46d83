#if canImport(Glibc)
    import Glibc
#endif

/// A failed system call's `errno`.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    public let code: Int32

    public init(_ code: Int32) {
        self.code = code
    }

    /// The `errno` the last system call left.
    public static var last: SystemError { SystemError(errno) }

    public var description: String { "\(String(cString: strerror(code))) (errno \(code))" }

    /// The disk or the user's quota is full: a refusal to store more, not damage.
    public var isNoSpace: Bool { code == ENOSPC || code == EDQUOT || code == EFBIG }
}

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

/// The real file system: each call is the system call it names, retried on `EINTR`.
public struct PosixFileSystem: FileSystem {
    public init() {}

    public func open(_ path: String, flags: Int32, mode: mode_t) throws(SystemError) -> Int32 {
        while true {
            let descriptor = Glibc.open(path, flags | O_CLOEXEC, mode)
            if descriptor >= 0 { return descriptor }
            if errno != EINTR { throw .last }
        }
    }

    public func close(_ descriptor: Int32) {
        _ = Glibc.close(descriptor)
    }

    public func read(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64
    )
        throws(SystemError) -> Int
    {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            let result = pread(descriptor, base, buffer.count, off_t(offset))
            if result >= 0 { return result }
            if errno != EINTR { throw .last }
        }
    }

    public func write(
        _ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64
    ) throws(SystemError)
        -> Int
    {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return 0 }
        while true {
            let result = pwrite(descriptor, base, bytes.count, off_t(offset))
            if result >= 0 { return result }
            if errno != EINTR { throw .last }
        }
    }

    public func dataSync(_ descriptor: Int32) throws(SystemError) {
        // Not retried on EINTR either: whether the data reached the disk is then unknown.
        guard fdatasync(descriptor) == 0 else { throw .last }
    }

    public func sync(_ descriptor: Int32) throws(SystemError) {
        guard fsync(descriptor) == 0 else { throw .last }
    }

    public func truncate(_ descriptor: Int32, to size: Int64) throws(SystemError) {
        while ftruncate(descriptor, off_t(size)) != 0 {
            if errno != EINTR { throw .last }
        }
    }

    public func size(of descriptor: Int32) throws(SystemError) -> Int64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .last }
        return Int64(info.st_size)
    }

    public func setMode(_ descriptor: Int32, _ mode: mode_t) throws(SystemError) {
        guard fchmod(descriptor, mode) == 0 else { throw .last }
    }

    public func rename(_ from: String, to: String) throws(SystemError) {
        guard Glibc.rename(from, to) == 0 else { throw .last }
    }

    public func remove(_ path: String) throws(SystemError) {
        guard unlink(path) == 0 else { throw .last }
    }

    public func makeDirectory(_ path: String, mode: mode_t) throws(SystemError) {
        guard mkdir(path, mode) == 0 else { throw .last }
    }

    public func setMode(path: String, _ mode: mode_t) throws(SystemError) {
        guard chmod(path, mode) == 0 else { throw .last }
    }

    public func list(_ directory: String) throws(SystemError) -> [String] {
        guard let handle = opendir(directory) else { throw .last }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    public func lockExclusively(_ descriptor: Int32) throws(SystemError) {
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { throw .last }
    }

    public func unlock(_ descriptor: Int32) {
        _ = flock(descriptor, LOCK_UN)
    }

    public func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }
}
