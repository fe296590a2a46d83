import Guards

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// Where a deployment keeps its files and how processes find the bus.
///
///     <data>/log/        the event log (segments, indexes, LOCK)
///     <data>/run/        mode 0700: the bus's ipc sockets and bus.json
///     <data>/snapshots/  reducer snapshots
///     <data>/logs/       process output
public struct BusLocation: Sendable, Equatable {
    /// The data directory, absolute.
    public let dataDirectory: String

    /// The default data directory, relative to the working directory.
    public static let defaultDataDirectory = ".bureau"
    /// The environment variable that names the data directory when `--data` is not given.
    public static let environmentVariable = "BUREAU_DATA"

    public init(dataDirectory: String) {
        self.dataDirectory = BusLocation.absolute(dataDirectory)
    }

    /// `--data` if given, else `BUREAU_DATA`, else `.bureau` in the working directory.
    public static func resolve(
        data: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    )
        -> BusLocation
    {
        let chosen = data ?? environment[environmentVariable].flatMap { $0.isEmpty ? nil : $0 } ?? defaultDataDirectory
        return BusLocation(dataDirectory: chosen)
    }

    public var logDirectory: String { dataDirectory + "/log" }
    public var runDirectory: String { dataDirectory + "/run" }
    public var snapshotDirectory: String { dataDirectory + "/snapshots" }
    public var processLogDirectory: String { dataDirectory + "/logs" }
    public var infoFile: String { runDirectory + "/bus.json" }

    /// The ipc endpoints in the run directory.
    public var ipcEndpoints: BusEndpoints {
        BusEndpoints(
            ingress: "ipc://" + runDirectory + "/ingress.sock",
            read: "ipc://" + runDirectory + "/read.sock",
            events: "ipc://" + runDirectory + "/events.sock")
    }

    /// The endpoints a client on this machine should use: what bus.json says; the ipc defaults
    /// when there is none (no daemon has run here, or it has stopped). A bus.json that cannot be
    /// read or decoded is not taken for none silently: `unreadable` is told why, then the ipc
    /// defaults are used (a daemon of this build listens there too).
    public func endpoints(unreadable: (BusError) -> Void) -> BusEndpoints {
        do {
            return try readInfo()?.endpoints ?? ipcEndpoints
        } catch {
            unreadable(error)
            return ipcEndpoints
        }
    }

    /// The most bus.json is read of: a daemon writes a few hundred bytes.
    public static let maxInfoBytes = 64 << 10

    /// bus.json, written by a running daemon; nil if there is none. Throws
    /// ``BusError/unusableLocation(_:)``, naming the file, if it cannot be read or is not what a
    /// daemon writes.
    public func readInfo() throws(BusError) -> BusInfo? {
        let data: Data
        do {
            data = try BoundedFile.read(infoFile, limit: Self.maxInfoBytes)
        } catch {
            // Absent is none; unreadable (its mode, a directory in its place) is a problem.
            if FilePresence.isMissing(infoFile) { return nil }
            throw .unusableLocation("\(infoFile) cannot be used: \(error)")
        }
        do {
            return try JSONDecoder().decode(BusInfo.self, from: data)
        } catch {
            throw .unusableLocation("\(infoFile) is not what a bus daemon writes: \(error)")
        }
    }

    /// The longest ipc socket path Linux accepts (`sun_path` less its terminator).
    public static let maxSocketPath = 107

    /// Why the run directory's socket paths cannot be used, or nil.
    public var socketPathProblem: String? {
        let longest = runDirectory + "/ingress.sock"
        guard longest.utf8.count > BusLocation.maxSocketPath else { return nil }
        return "the socket path \(longest) is \(longest.utf8.count) bytes, over Linux's limit of "
            + "\(BusLocation.maxSocketPath); use a shorter --data directory"
    }

    static func absolute(_ path: String) -> String {
        let joined: String
        if path.hasPrefix("/") {
            joined = path
        } else {
            joined = FileManager.default.currentDirectoryPath + "/" + path
        }
        // Normalise "a/./b", "a//b" and a trailing "/"; keep ".." (symlinks make it ambiguous).
        var parts: [Substring] = []
        for part in joined.split(separator: "/") where part != "." {
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }
}
