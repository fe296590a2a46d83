import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A fresh directory in the temporary directory (`TMPDIR`, or /tmp), removed with everything in
/// it when released.
///
/// The path is short on purpose: `ipc://` socket paths must fit in 107 bytes, so a `TMPDIR`
/// should be short too (tools/test's is `/dev/shm/bt.XXXXXX`).
public final class TemporaryDirectory: @unchecked Sendable {
    public let path: String

    public init(_ prefix: String = "bt") throws {
        var template = Array("\(NSTemporaryDirectory())\(prefix)-XXXXXX".utf8CString)
        let created = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) } != nil
        }
        guard created else {
            throw BusTestingError("cannot create a directory in \(NSTemporaryDirectory()): errno \(errno)")
        }
        path = String(decoding: template.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `path/name`.
    public func file(_ name: String) -> String { path + "/" + name }

    deinit {
        TemporaryDirectory.remove(path)
    }

    /// Removes a directory tree, like `rm -rf`.
    public static func remove(_ path: String) {
        guard let directory = opendir(path) else {
            unlink(path)
            return
        }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            let child = path + "/" + name
            if entry.pointee.d_type == UInt8(DT_DIR) {
                remove(child)
            } else {
                unlink(child)
            }
        }
        closedir(directory)
        rmdir(path)
    }
}
