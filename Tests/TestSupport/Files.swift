#if canImport(Glibc)
    import Glibc
#endif

/// Small file operations tests use to damage, inspect and list files.
public enum Files {
    public static func size(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : -1
    }

    public static func mode(_ path: String) -> UInt32 {
        var info = stat()
        return stat(path, &info) == 0 ? UInt32(info.st_mode) & 0o7777 : 0
    }

    public static func truncate(_ path: String, to size: Int64) throws {
        guard Glibc.truncate(path, off_t(size)) == 0 else { throw TestSupportError("truncate \(path): errno \(errno)") }
    }

    /// Overwrites bytes at `offset` of an existing file.
    public static func overwrite(_ path: String, at offset: Int64, with bytes: [UInt8]) throws {
        let fd = open(path, O_WRONLY)
        guard fd >= 0 else { throw TestSupportError("open \(path): errno \(errno)") }
        defer { close(fd) }
        let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
        guard written == bytes.count else { throw TestSupportError("pwrite \(path): errno \(errno)") }
    }

    public static func write(_ path: String, _ text: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw TestSupportError("open \(path): errno \(errno)") }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    }

    public static func read(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            result += buffer[0..<count]
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// Whether `path` is a directory.
    public static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }

    /// Names in a directory, sorted.
    public static func list(_ path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}
