#if canImport(Glibc)
    import Glibc
#endif

/// An open file of the log, through a ``FileSystem``, with the few calls the log needs, each
/// failing with the path and errno.
final class PosixFile {
    let path: String
    let fileSystem: any FileSystem
    private(set) var descriptor: Int32

    /// Opens `path` with `flags` (`O_RDONLY`, `O_RDWR | O_CREAT`, …). A file it creates gets
    /// exactly `mode`, whatever the umask.
    init(path: String, flags: Int32, mode: mode_t = 0o600, fileSystem: any FileSystem) throws {
        self.path = path
        self.fileSystem = fileSystem
        do {
            descriptor = try fileSystem.open(path, flags: flags, mode: mode)
        } catch {
            throw EventLogError.io(operation: "open", path: path, errno: error.code)
        }
        if flags & O_CREAT != 0 {
            do {
                try fileSystem.setMode(descriptor, mode)
            } catch {
                fileSystem.close(descriptor)
                // deinit runs when an initialised object's init throws: it must not close the
                // number again, which another part of the process may have been given by now.
                descriptor = -1
                throw EventLogError.io(operation: "fchmod", path: path, errno: error.code)
            }
        }
    }

    deinit { close() }

    func close() {
        if descriptor >= 0 {
            fileSystem.close(descriptor)
            descriptor = -1
        }
    }

    var size: Int64 {
        get throws {
            do {
                return try fileSystem.size(of: descriptor)
            } catch {
                throw EventLogError.io(operation: "fstat", path: path, errno: error.code)
            }
        }
    }

    /// Fills as much of `buffer` as the file has from `offset`; returns how many bytes were read.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        var total = 0
        while total < buffer.count {
            let got: Int
            do {
                got = try fileSystem.read(
                    descriptor, into: UnsafeMutableRawBufferPointer(rebasing: buffer[total...]),
                    at: offset + Int64(total))
            } catch {
                throw EventLogError.io(operation: "read", path: path, errno: error.code)
            }
            if got == 0 { break }
            total += got
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

    /// Writes all of `bytes` at `offset`, going on after short writes; a failure may leave a
    /// prefix written.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        var written = 0
        while written < bytes.count {
            do {
                written += try fileSystem.write(
                    descriptor, UnsafeRawBufferPointer(rebasing: bytes[written...]), at: offset + Int64(written))
            } catch {
                throw EventLogError.io(operation: "write", path: path, errno: error.code)
            }
        }
    }

    /// `fdatasync`. After a failure the file's state on disk is unknown, and calling it again
    /// could report success for data the kernel has dropped (PostgreSQL's fsync lesson of
    /// 2018): the caller must stop using the file, and recover from what is durable.
    func dataSync() throws {
        do {
            try fileSystem.dataSync(descriptor)
        } catch {
            throw EventLogError.io(operation: "fdatasync", path: path, errno: error.code)
        }
    }

    func truncate(to size: Int64) throws {
        do {
            try fileSystem.truncate(descriptor, to: size)
        } catch {
            throw EventLogError.io(operation: "ftruncate", path: path, errno: error.code)
        }
    }

    /// Reads a whole file of at most `limit` bytes, including /proc files whose size reads as
    /// zero; a larger one is EFBIG, having read no more than one byte past the limit.
    static func readAll(_ path: String, fileSystem: any FileSystem, limit: Int = 64 << 20) throws -> [UInt8] {
        let file = try PosixFile(path: path, flags: O_RDONLY, fileSystem: fileSystem)
        var result: [UInt8] = []
        while result.count <= limit {
            // One byte past the limit tells a file of exactly `limit` bytes from a larger one.
            let wanted = min(64 << 10, limit + 1 - result.count)
            let chunk = try file.read(count: wanted, at: Int64(result.count))
            result += chunk
            // `read` stops short only at the end of the file.
            if chunk.count < wanted { return result }
        }
        throw EventLogError.io(operation: "read", path: path, errno: EFBIG)
    }

    /// fsyncs a directory, so that a file created or renamed in it survives a power cut.
    static func syncDirectory(_ path: String, fileSystem: any FileSystem) throws {
        let directory = try PosixFile(path: path, flags: O_RDONLY | O_DIRECTORY, fileSystem: fileSystem)
        do {
            try fileSystem.sync(directory.descriptor)
        } catch {
            throw EventLogError.io(operation: "fsync", path: path, errno: error.code)
        }
    }

    /// Writes a small file whole and durably: written aside with `mode`, synced, renamed over
    /// `path`, and the directory synced. A crash leaves the old file or the new one.
    static func replace(
        _ path: String, with bytes: UnsafeRawBufferPointer, mode: mode_t = 0o600, fileSystem: any FileSystem
    ) throws {
        let temporary = path + ".new"
        do {
            let file = try PosixFile(
                path: temporary, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: mode, fileSystem: fileSystem)
            try file.write(bytes, at: 0)
            try file.dataSync()
            file.close()
            do {
                try fileSystem.rename(temporary, to: path)
            } catch {
                throw EventLogError.io(operation: "rename", path: temporary, errno: error.code)
            }
        } catch {
            // Whatever was written aside is of no use; the old file stands.
            try? fileSystem.remove(temporary)
            throw error
        }
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        try syncDirectory(directory.isEmpty ? "." : directory, fileSystem: fileSystem)
    }
}
