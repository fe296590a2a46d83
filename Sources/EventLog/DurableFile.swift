#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Small files written whole and durably through a ``FileSystem`` (reducer snapshots and other
/// state beside the log): owner-only, replaced atomically, so a crash leaves the old file or
/// the new one, and every call can be made to fail in tests.
public enum DurableFile {
    /// Replaces `path` with `bytes`: written aside (mode 0600), synced, renamed over, and the
    /// directory synced. The directory is created (0700) if it is missing.
    public static func replace(
        _ path: String, with bytes: Data, fileSystem: any FileSystem = PosixFileSystem()
    )
        throws
    {
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if !directory.isEmpty { try OwnerOnly.makeDirectory(directory, fileSystem: fileSystem) }
        try bytes.withUnsafeBytes { try PosixFile.replace(path, with: $0, fileSystem: fileSystem) }
    }

    /// The bytes of `path`, or nil if it does not exist; files over `limit` bytes are an error.
    public static func read(
        _ path: String, limit: Int, fileSystem: any FileSystem = PosixFileSystem()
    ) throws
        -> Data?
    {
        guard fileSystem.exists(path) else { return nil }
        return Data(try PosixFile.readAll(path, fileSystem: fileSystem, limit: limit))
    }
}
