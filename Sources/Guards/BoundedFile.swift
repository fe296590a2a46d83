import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Files a person hands the tool (a deployment, a scenario, a key file), read only up to a
/// limit: a file over it is refused after reading at most one byte more than the limit, so a
/// huge file, a device or a pipe that never ends costs no more memory than the limit.
public enum BoundedFile {
    /// Why a file was not read; names the file.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        case unreadable(path: String, reason: String)
        case tooLarge(path: String, limit: Int)
        case notText(path: String)

        public var description: String {
            switch self {
            case .unreadable(let path, let reason): "cannot read \(path): \(reason)"
            case .tooLarge(let path, let limit): "\(path) is larger than \(BoundedFile.size(limit)), the limit"
            case .notText(let path): "\(path) is not UTF-8 text"
            }
        }
    }

    /// The bytes of the file at `path`, if it holds at most `limit` bytes.
    public static func read(_ path: String, limit: Int) throws(Problem) -> Data {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while data.count <= limit {
            let wanted = min(chunk.count, limit + 1 - data.count)
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, wanted) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
            if count == 0 { return data }
            data.append(contentsOf: chunk[0..<count])
        }
        throw .tooLarge(path: path, limit: limit)
    }

    /// The text of the file at `path` (UTF-8), if it holds at most `limit` bytes.
    public static func text(_ path: String, limit: Int) throws(Problem) -> String {
        let data = try read(path, limit: limit)
        guard let text = String(validating: data, as: UTF8.self) else { throw .notText(path: path) }
        return text
    }

    /// `bytes` as people read sizes: "1 MiB", "64 KiB", "100 bytes".
    public static func size(_ bytes: Int) -> String {
        if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10 && bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }
}
