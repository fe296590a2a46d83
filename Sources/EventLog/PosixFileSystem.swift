#if canImport(Glibc)
    import Glibc
#endif

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
