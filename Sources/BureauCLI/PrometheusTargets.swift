import Bus
import EventLog
import Foundation
import Guards
import Logging
import ServiceLifecycle

/// Keeps `<data>/prometheus-targets.json` listing where every process of the deployment serves
/// `/metrics`, for Prometheus' file-based service discovery (`file_sd_configs`; README,
/// "Watching it run"): made from the records in `run/metrics/` of processes still running,
/// looked at every second, and rewritten (whole, by a rename) when they change. `bureau up`
/// runs it.
struct PrometheusTargets: Service {
    let location: BusLocation
    let logger: Logger
    var interval: Duration = .seconds(1)

    static func path(_ location: BusLocation) -> String { location.dataDirectory + "/prometheus-targets.json" }

    /// One group of targets, as file_sd_configs reads them.
    struct Group: Codable, Equatable {
        var targets: [String]
        var labels: [String: String]
    }

    /// The targets found in `run/metrics/`, and the records passed over (file name: why).
    struct Scan: Equatable {
        var groups: [Group]
        var passedOver: [String: String]
    }

    func run() async throws {
        var written: [Group]?
        // A write that fails is tried again every turn, and said once, not every turn; so is a
        // directory that cannot be read, and a record that cannot be read while it stays so.
        var failures = FailureStreak()
        var unreadable = FailureStreak()
        var passedOver: [String: String] = [:]
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            let groups: [Group]?
            do {
                let scan = try Self.scan(location)
                groups = scan.groups
                if unreadable.succeeded() > 0 {
                    logger.notice(
                        "the records of /metrics can be read again",
                        metadata: ["metrics.path": "\(MetricsEndpoint.directory(location))"])
                }
                for (name, reason) in scan.passedOver.sorted(by: { $0.key < $1.key })
                where passedOver[name] != reason {
                    logger.warning(
                        "passing over a record of /metrics that cannot be read: its process is not a target",
                        metadata: [
                            "metrics.path": "\(MetricsEndpoint.directory(location) + "/" + name)",
                            "metrics.error": "\(reason)",
                        ])
                }
                passedOver = scan.passedOver
            } catch {
                // Not knowing the processes is not the same as there being none: the file
                // last written stays, rather than Prometheus losing every target.
                groups = nil
                if unreadable.failed() {
                    logger.error(
                        """
                        cannot read the records of /metrics: Prometheus' targets are left as they were; \
                        tried again every \(interval.scaledText())
                        """,
                        metadata: [
                            "metrics.path": "\(MetricsEndpoint.directory(location))", "metrics.error": "\(error)",
                        ])
                }
            }
            // While writes fail, tried every turn: the processes may have come back to the set
            // last written, and the file must still be written once.
            if let groups, groups != written || failures.count > 0 {
                do {
                    try Self.write(groups, to: Self.path(location))
                    written = groups
                    if failures.succeeded() > 0 {
                        logger.notice(
                            "Prometheus' targets are written again",
                            metadata: ["metrics.path": "\(Self.path(location))"])
                    }
                } catch {
                    if failures.failed() {
                        logger.error(
                            """
                            cannot write Prometheus' targets: Prometheus does not see the processes that \
                            started or stopped since; tried again every \(interval.scaledText())
                            """,
                            metadata: ["metrics.path": "\(Self.path(location))", "metrics.error": "\(error)"])
                    }
                }
            }
            // Periodic work: processes start and restart on their own time.
            try? await cancelWhenGracefulShutdown { [interval] in try await Task.sleep(for: interval) }
        }
    }

    /// The targets of the processes whose records are in `run/metrics/` and still running, and
    /// the records that cannot be read or decoded.
    ///
    /// Throws when the directory exists but cannot be listed: only its absence means no targets.
    static func scan(_ location: BusLocation) throws -> Scan {
        let directory = MetricsEndpoint.directory(location)
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            // No directory: no process serves /metrics yet.
            if FilePresence.isMissing(directory) { return Scan(groups: [], passedOver: [:]) }
            throw error
        }
        var scan = Scan(groups: [], passedOver: [:])
        for name in names.sorted() where name.hasSuffix(".json") {
            let path = directory + "/" + name
            guard let data = FileManager.default.contents(atPath: path) else {
                // Gone since the listing: its process stopped and removed it.
                if FilePresence.isMissing(path) { continue }
                scan.passedOver[name] = "it cannot be read"
                continue
            }
            let record: MetricsEndpoint.Record
            do {
                record = try JSONDecoder().decode(MetricsEndpoint.Record.self, from: data)
            } catch {
                scan.passedOver[name] = "\(error)"
                continue
            }
            guard kill(record.pid, 0) == 0 || errno == EPERM else { continue }
            scan.groups.append(Group(targets: [record.address], labels: ["bureau_process": record.process]))
        }
        return scan
    }

    static func write(_ groups: [Group], to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let temporary = path + ".new"
        try encoder.encode(groups).write(to: URL(fileURLWithPath: temporary))
        guard rename(temporary, path) == 0 else {
            throw CLIError("cannot rename \(temporary) to \(path): \(SystemError.last)")
        }
    }
}
