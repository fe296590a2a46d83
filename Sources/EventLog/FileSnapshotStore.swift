import Logging
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Snapshots as files, `<directory>/<module>.snapshot`, each replaced atomically (written
/// aside, fsynced, renamed over, directory fsynced), owner-only, with a checksum, through a
/// ``FileSystem`` (so that tests can make any write fail).
public struct FileSnapshotStore: SnapshotStore {
    public let directory: String
    public let fileSystem: any FileSystem
    /// Where what goes wrong beside a save that succeeded is said (an out-of-date file left
    /// behind); nil says nothing.
    public let logger: Logger?
    /// The largest snapshot file read; a larger one is ignored with a reason.
    public static let maxBytes = 256 << 20

    public init(directory: String, fileSystem: any FileSystem = PosixFileSystem(), logger: Logger? = nil) {
        self.directory = directory
        self.fileSystem = fileSystem
        self.logger = logger
    }

    public func path(of module: String) -> String { directory + "/" + module + ".snapshot" }

    /// Where snapshots were kept before they had a checksum; read if there is no newer file.
    func legacyPath(of module: String) -> String { directory + "/" + module + ".snapshot.json" }

    public func load<State: Codable & Sendable>(
        _ type: State.Type, module: String, stateVersion: Int, rejected: (String) -> Void
    ) -> Snapshot<State>? {
        for path in [path(of: module), legacyPath(of: module)] {
            let data: Data
            do {
                guard let read = try DurableFile.read(path, limit: Self.maxBytes, fileSystem: fileSystem) else {
                    continue
                }
                data = read
            } catch {
                rejected("\(path): \(error)")
                return nil
            }
            switch SnapshotCoding.decode(data, as: type, module: module, stateVersion: stateVersion) {
            case .success(let snapshot): return snapshot
            case .failure(let rejection):
                rejected("\(path): \(rejection.reason)")
                return nil
            }
        }
        return nil
    }

    public func save<State: Codable & Sendable>(_ snapshot: Snapshot<State>) throws {
        let data = try SnapshotCoding.encode(snapshot)
        do {
            try DurableFile.replace(path(of: snapshot.module), with: data, fileSystem: fileSystem)
        } catch {
            throw SnapshotError(description: "could not save the snapshot of \(snapshot.module): \(error)")
        }
        // The old format would be read if the new file went missing; it is out of date now. Left
        // behind, it is tried again at the next save; the save itself succeeded, so not thrown.
        let legacy = legacyPath(of: snapshot.module)
        guard fileSystem.exists(legacy) else { return }
        do {
            try fileSystem.remove(legacy)
        } catch {
            logger?.warning(
                "could not remove the out-of-date snapshot of the old format; tried again at the next save",
                metadata: ["snapshot.path": "\(legacy)", "snapshot.error": "\(error)"])
        }
    }
}
