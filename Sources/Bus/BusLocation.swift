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

    /// The endpoints a client on this machine should use: what bus.json says, else the ipc defaults.
    public func endpoints() -> BusEndpoints {
        (try? readInfo())?.endpoints ?? ipcEndpoints
    }

    /// bus.json, written by a running daemon; nil if there is none.
    public func readInfo() throws -> BusInfo? {
        guard let data = FileManager.default.contents(atPath: infoFile) else { return nil }
        return try JSONDecoder().decode(BusInfo.self, from: data)
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
