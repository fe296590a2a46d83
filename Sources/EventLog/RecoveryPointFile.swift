#if canImport(Glibc)
    import Glibc
#endif

/// The writer's open `recovery-point` file, rewritten in place.
final class RecoveryPointFile {
    private let file: PosixFile
    private(set) var current: RecoveryPoint?

    /// Opens (creating) the file; it is written at the first ``record(_:)``.
    init(directory: String, fileSystem: any FileSystem) throws {
        file = try PosixFile(
            path: RecoveryPoint.path(in: directory), flags: O_RDWR | O_CREAT, mode: 0o600, fileSystem: fileSystem)
    }

    /// Rewrites the file with `point`, without syncing: the data it describes is already as
    /// durable as the policy makes it, and a stale file only weakens what damage can be told
    /// from a torn write, never the other way.
    func record(_ point: RecoveryPoint) throws {
        guard point != current else { return }
        try point.bytes.withUnsafeBytes { try file.write($0, at: 0) }
        current = point
    }

    /// Rewrites the file with `point` and makes it durable (at a segment roll, after recovery, on close).
    func recordDurably(_ point: RecoveryPoint) throws {
        try point.bytes.withUnsafeBytes { try file.write($0, at: 0) }
        current = point
        try file.dataSync()
    }

    func close() {
        file.close()
    }
}
