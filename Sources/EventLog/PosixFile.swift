#if canImport(Glibc)
    import Glibc
#endif

/// A file descriptor with the few calls the log needs, each failing with the path and errno.
final class PosixFile {
    let path: String
    private(set) var descriptor: Int32

    /// Opens `path` with `flags` (`O_RDONLY`, `O_RDWR | O_CREAT`, …).
    init(path: String, flags: Int32, mode: mode_t = 0o644) throws {
        let descriptor = open(path, flags | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw EventLogError.io(operation: "open", path: path, errno: errno) }
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close() }

    func close() {
        if descriptor >= 0 {
            Glibc.close(descriptor)
            descriptor = -1
        }
    }

    var size: Int64 {
        get throws {
            var info = stat()
            guard fstat(descriptor, &info) == 0 else {
                throw EventLogError.io(operation: "fstat", path: path, errno: errno)
            }
            return Int64(info.st_size)
        }
    }

    /// Fills as much of `buffer` as the file has from `offset`; returns how many bytes were read.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var total = 0
        while total < buffer.count {
            let result = pread(descriptor, base + total, buffer.count - total, off_t(offset) + off_t(total))
            if result < 0 {
                if errno == EINTR { continue }
                throw EventLogError.io(operation: "read", path: path, errno: errno)
            }
            if result == 0 { break }
            total += result
        }
        return total
    }

    /// Reads up to `count` bytes at `offset`.
    func read(count: Int, at offset: Int64) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = try bytes.withUnsafeMutableBytes { try read(into: $0, at: offset) }
        bytes.removeLast(count - got)
        return bytes
    }

    /// Writes all of `bytes` at `offset`.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        guard let base = bytes.baseAddress else { return }
        var written = 0
        while written < bytes.count {
            let result = pwrite(descriptor, base + written, bytes.count - written, off_t(offset) + off_t(written))
            if result < 0 {
                if errno == EINTR { continue }
                throw EventLogError.io(operation: "write", path: path, errno: errno)
            }
            written += result
        }
    }

    func dataSync() throws {
        guard fdatasync(descriptor) == 0 else {
            throw EventLogError.io(operation: "fdatasync", path: path, errno: errno)
        }
    }

    func truncate(to size: Int64) throws {
        guard ftruncate(descriptor, off_t(size)) == 0 else {
            throw EventLogError.io(operation: "ftruncate", path: path, errno: errno)
        }
    }

    /// Reads a whole file, including /proc files whose size reads as zero.
    static func readAll(_ path: String) throws -> [UInt8] {
        let file = try PosixFile(path: path, flags: O_RDONLY)
        var result: [UInt8] = []
        var offset: Int64 = 0
        while true {
            let chunk = try file.read(count: 64 << 10, at: offset)
            result += chunk
            offset += Int64(chunk.count)
            if chunk.count < 64 << 10 { return result }
        }
    }

    /// fsyncs a directory, so that a file created or renamed in it survives a power cut.
    static func syncDirectory(_ path: String) throws {
        let directory = try PosixFile(path: path, flags: O_RDONLY | O_DIRECTORY)
        guard fsync(directory.descriptor) == 0 else {
            throw EventLogError.io(operation: "fsync", path: path, errno: errno)
        }
    }

    static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// Creates `path` and its parents with `mode`, like `mkdir -p`.
    static func makeDirectory(_ path: String, mode: mode_t = 0o755) throws {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, mode) != 0 && errno != EEXIST {
                throw EventLogError.io(operation: "mkdir", path: current, errno: errno)
            }
        }
    }
}
