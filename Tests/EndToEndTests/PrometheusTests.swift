import Bus
import EventLog
import FeatureTestSupport
import Foundation
import TestSupport
import Testing
import WatchlistFeature
import ZeroMQBus

/// A real Prometheus scraping a real deployment (`bureau up`): a reducer host frozen with
/// SIGSTOP is seen falling behind, through the bus's lag metrics, and catching up after SIGCONT.
@Suite(
    .timeLimit(.minutes(4)),
    .enabled(
        if: PrometheusServer.executable != nil && PrometheusServer.promtool != nil,
        "Debian's prometheus is not installed: tools/setup installs it (the test needs prometheus and promtool)"))
struct PrometheusTests {
    @Test func aFrozenHostsLagRisesInPrometheusAndReturnsToZeroAfterSIGCONT() async throws {
        let directory = try TemporaryDirectory("prometheus")
        let data = directory.file("data")
        let file = directory.file("bureau.yaml")
        try """
        processes:
          bus:
            command: [bus, --heartbeat-ms, "100"]
          reducers:
            command: run watchlist
            depends_on: [bus]
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let up = try ChildProcess(
            BureauExecutable.path, ["up", "--no-tui", "--file", file, "--data", data], directory: directory.path,
            name: "up", readiness: true)
        defer { up.signal(SIGKILL) }
        try await up.waitUntilReady(timeout: .seconds(120))
        let location = BusLocation(dataDirectory: data)
        let cli = BusProcess(directory: directory.path, data: data)

        // bureau up lists every process's /metrics for Prometheus' file-based discovery.
        let targetsFile = data + "/prometheus-targets.json"
        var targets: [String: String] = [:]
        try await PrometheusServer.until(timeout: .seconds(30), what: "bus, watchlist and supervisor in \(targetsFile)")
        {
            targets = Self.targets(targetsFile)
            return ["bus", "watchlist", "supervisor"].allSatisfy { targets[$0] != nil }
        }

        let prometheus = try PrometheusServer(directory: directory.path, targetsFile: targetsFile)
        // Every process's output passes promtool's checks (help text, types, names).
        for (process, address) in targets {
            let (status, body) = try await prometheus.get("http://\(address)/metrics")
            #expect(status == 200, "\(process)")
            let text = String(decoding: body, as: UTF8.self)
            #expect(try PrometheusServer.checkMetrics(text) == nil, "\(process): \(text.prefix(4000))")
            // Bounded labels only: never an id, a pair, an amount, a key or a URL.
            #expect(Self.labelNames(text).isSubset(of: Self.allowedLabels), "\(process): \(Self.labelNames(text))")
        }
        try await prometheus.waitUntilReady()
        try await PrometheusServer.until(timeout: .seconds(30), what: "Prometheus to scrape the three targets") {
            try await prometheus.query("up == 1").count >= 3
        }

        let client = try ZeroMQBusClient(
            location: location, options: .init(process: "test"), logger: .init(label: "test"))
        defer { client.close() }
        // Published all along: the host answers each with PairAdded or PairRejected.
        let publishing = Task {
            var count = 0
            while !Task.isCancelled {
                let event =
                    count % 2 == 0
                    ? try? OutgoingEvent(PairAddRequested(base: "EUR", quote: "USD"))
                    : try? OutgoingEvent(PairRemoveRequested(base: "EUR", quote: "USD"))
                if let event { _ = try? await client.publish(event) }
                count += 1
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        defer { publishing.cancel() }
        let lag = #"bureau_consumer_lag_events{module="watchlist"}"#
        let age = #"bureau_consumer_progress_age_seconds{module="watchlist"}"#

        let host = try #require(Self.pid(of: "watchlist", in: location), "the host's metrics record names its pid")
        kill(host, SIGSTOP)
        var frozenAge = 0.0
        do {
            // Stopped, it reports nothing: the bus's view of its lag keeps growing.
            try await PrometheusServer.until(timeout: .seconds(30), what: "\(lag) over 50") {
                try await prometheus.query(lag).first.map { $0.value > 50 } ?? false
            }
            frozenAge = try #require(try await prometheus.query(age).first?.value)
            try await PrometheusServer.until(timeout: .seconds(30), what: "\(age) to grow past \(frozenAge + 2)") {
                try await prometheus.query(age).first.map { $0.value > frozenAge + 2 } ?? false
            }
            // `bureau status`, the health check for scripts, says so too, and fails.
            let status = try await cli.run(["status", "--json", "--max-lag-s", "1"])
            #expect(status.code == 1, "bureau status with a frozen host: \(status.out) \(status.err)")
            let report = try JSONSerialization.jsonObject(with: Data(status.out.utf8)) as? [String: Any]
            #expect(report?["healthy"] as? Bool == false, "\(status.out)")
            #expect(
                (report?["problems"] as? [String])?.contains { $0.contains("watchlist") } == true,
                "the frozen host is named among the problems: \(status.out)")
        } catch {
            kill(host, SIGCONT)
            throw error
        }
        kill(host, SIGCONT)
        publishing.cancel()
        _ = await publishing.value
        try await PrometheusServer.until(timeout: .seconds(60), what: "\(lag) back to 0") {
            try await prometheus.query(lag).first.map { $0.value == 0 } ?? false
        }
        #expect(try await prometheus.query(age).first.map { $0.value < 5 } ?? false, "reporting again")
        let healthy = try await cli.run(["status", "--max-lag-s", "30"])
        #expect(healthy.code == 0, "bureau status once the host caught up: \(healthy.out) \(healthy.err)")
        #expect(healthy.out.contains("watchlist"), "\(healthy.out)")

        await prometheus.stop()
        up.signal(SIGTERM)
        #expect(await up.exitCode() == 0)
    }

    /// The label names a process's metrics may carry.
    static let allowedLabels: Set<String> = ["module", "process", "outcome", "reason", "kind", "call", "le"]

    /// Every label name in a text exposition.
    static func labelNames(_ text: String) -> Set<String> {
        var names = Set<String>()
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let open = line.firstIndex(of: "{"), let close = line.firstIndex(of: "}") else { continue }
            for pair in line[line.index(after: open)..<close].split(separator: ",") {
                if let equals = pair.firstIndex(of: "=") { names.insert(String(pair[..<equals])) }
            }
        }
        return names
    }

    /// The targets file's process → address.
    static func targets(_ path: String) -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path),
            let groups = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]]
        else { return [:] }
        var targets: [String: String] = [:]
        for group in groups {
            guard let labels = group["labels"] as? [String: String], let process = labels["bureau_process"],
                let address = (group["targets"] as? [String])?.first
            else { continue }
            targets[process] = address
        }
        return targets
    }

    /// The pid a process recorded beside its /metrics address.
    static func pid(of process: String, in location: BusLocation) -> Int32? {
        guard let data = FileManager.default.contents(atPath: location.runDirectory + "/metrics/\(process).json"),
            let record = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return (record["pid"] as? Int).map(Int32.init)
    }
}
