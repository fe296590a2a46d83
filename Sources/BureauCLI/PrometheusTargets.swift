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

    func run() async throws {
        var written: [Group]?
        // A write that fails is tried again every turn, and said once, not every turn.
        var failures = FailureStreak()
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            let groups = Self.groups(location)
            // While writes fail, tried every turn: the processes may have come back to the set
            // last written, and the file must still be written once.
            if groups != written || failures.count > 0 {
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

    /// The targets of the processes whose records are in `run/metrics/` and still running.
    static func groups(_ location: BusLocation) -> [Group] {
        let directory = MetricsEndpoint.directory(location)
        // No directory: no process serves /metrics yet. A record it cannot read is passed over
        // (looked at again in a second); its process's own log says when it could not write it.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var groups: [Group] = []
        for name in names.sorted() where name.hasSuffix(".json") {
            guard let data = FileManager.default.contents(atPath: directory + "/" + name),
                let record = try? JSONDecoder().decode(MetricsEndpoint.Record.self, from: data),
                kill(record.pid, 0) == 0 || errno == EPERM
            else { continue }
            groups.append(Group(targets: [record.address], labels: ["bureau_process": record.process]))
        }
        return groups
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
