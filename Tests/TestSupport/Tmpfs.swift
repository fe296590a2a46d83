import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A tmpfs of a given size, mounted for a test and unmounted after.
public struct Tmpfs {
    public let path: String

    /// Whether this process may mount one (root with CAP_SYS_ADMIN, as in CI): tried once, by
    /// mounting one.
    public static let canMount: Bool = {
        guard geteuid() == 0 else { return false }
        guard let probe = try? TemporaryDirectory("tmpfs-probe") else { return false }
        guard let mount = try? Tmpfs(probe.file("m"), megabytes: 1) else { return false }
        mount.unmount()
        return true
    }()

    public init(_ path: String, megabytes: Int) throws {
        self.path = path
        mkdir(path, 0o700)
        let result = Glibc.mount("tmpfs", path, "tmpfs", 0, "size=\(megabytes)m,mode=0700")
        guard result == 0 else { throw TestSupportError("mount tmpfs on \(path): errno \(errno)") }
    }

    /// Bytes free.
    public var free: Int64 {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return 0 }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    public func unmount() {
        umount2(path, Int32(MNT_DETACH))
    }
}
