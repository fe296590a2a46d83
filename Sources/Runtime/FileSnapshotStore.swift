import Synchronization

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Snapshots as files, `<directory>/<module>.snapshot.json`, each replaced atomically
/// (written aside, fsynced, renamed over, directory fsynced).
public struct FileSnapshotStore: SnapshotStore {
    public let directory: String

    public init(directory: String) {
        self.directory = directory
    }

    public func path(of module: String) -> String { directory + "/" + module + ".snapshot.json" }

    public func load<State: Codable & Sendable>(
        _ type: State.Type, module: String, stateVersion: Int, rejected: (String) -> Void
    ) -> Snapshot<State>? {
        guard let data = FileManager.default.contents(atPath: path(of: module)) else { return nil }
        switch SnapshotCoding.decode(data, as: type, module: module, stateVersion: stateVersion) {
        case .success(let snapshot): return snapshot
        case .failure(let rejection):
            rejected("\(path(of: module)): \(rejection.reason)")
            return nil
        }
    }

    public func save<State: Codable & Sendable>(_ snapshot: Snapshot<State>) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let data = try SnapshotCoding.encode(snapshot)
        let target = path(of: snapshot.module)
        let temporary = target + ".new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SnapshotError.io("open", temporary, errno) }
        defer { close(fd) }
        var written = 0
        try data.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            while written < raw.count {
                let result = write(fd, base + written, raw.count - written)
                if result < 0 {
                    if errno == EINTR { continue }
                    throw SnapshotError.io("write", temporary, errno)
                }
                written += result
            }
        }
        guard fsync(fd) == 0 else { throw SnapshotError.io("fsync", temporary, errno) }
        guard rename(temporary, target) == 0 else { throw SnapshotError.io("rename", temporary, errno) }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            fsync(directoryFD)
            close(directoryFD)
        }
    }
}

/// Snapshots kept in memory: the twin of ``FileSnapshotStore`` for tests.
public final class InMemorySnapshotStore: SnapshotStore {
    private let documents = Mutex<[String: Data]>([:])

    public init() {}

    public func load<State: Codable & Sendable>(
        _ type: State.Type, module: String, stateVersion: Int, rejected: (String) -> Void
    ) -> Snapshot<State>? {
        guard let data = documents.withLock({ $0[module] }) else { return nil }
        switch SnapshotCoding.decode(data, as: type, module: module, stateVersion: stateVersion) {
        case .success(let snapshot): return snapshot
        case .failure(let rejection):
            rejected(rejection.reason)
            return nil
        }
    }

    public func save<State: Codable & Sendable>(_ snapshot: Snapshot<State>) throws {
        let data = try SnapshotCoding.encode(snapshot)
        documents.withLock { $0[snapshot.module] = data }
    }

    /// Replaces a stored snapshot with arbitrary bytes, to test unreadable snapshots.
    public func corrupt(_ module: String, with data: Data) {
        documents.withLock { $0[module] = data }
    }
}

public struct SnapshotError: Error, CustomStringConvertible {
    public let description: String
    static func io(_ operation: String, _ path: String, _ code: Int32) -> SnapshotError {
        SnapshotError(description: "\(operation) \(path): \(String(cString: strerror(code)))")
    }
}
