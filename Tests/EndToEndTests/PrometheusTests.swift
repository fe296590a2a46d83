import Bus
import EventLog
import FeatureTestSupport
import Foundation
import TestSupport
import Testing
import WatchlistFeature
import ZeroMQBus

/// A real Prometheus scraping a real deployment (`bureau up`): a reducer host frozen with
/// SIGSTOP is seen falling behind, through the bus's lag metrics, and catching up after SIGCONT;
/// `bureau status` and `bureau top` put it first as trouble, also once the bus restarted and
/// has never heard from it; every process's /metrics passes `promtool check metrics`.
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
          rates-server:
            command: serve rates --port 0 --pace 0.2
          booking-server:
            command: serve booking --port 0
          reducers:
            command: run watchlist
            depends_on: [bus]
          rates-adapter:
            command: run rates-adapter --set rates-url=${rates-server.ready}/stats/eurofxref/eurofxref-daily.xml
            depends_on: [bus, rates-server]
          booking-adapter:
            command: run booking-adapter --set booking-url=${booking-server.ready}
            depends_on: [bus, booking-server]
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
        // Every kind of process that serves /metrics: the bus, a reducer host, both adapters
        // and the supervisor (the front-end's is checked by
        // theFrontEndsMetricsPassPromtool).
        let kinds = ["bus", "watchlist", "rates-adapter", "booking-adapter", "supervisor"]
        try await PrometheusServer.until(timeout: .seconds(30), what: "\(kinds) in \(targetsFile)") {
            targets = Self.targets(targetsFile)
            return kinds.allSatisfy { targets[$0] != nil }
        }

        let prometheus = try PrometheusServer(directory: directory.path, targetsFile: targetsFile)
        // Every process's output passes promtool's checks (help text, types, names).
        for (process, address) in targets {
            let (status, body) = try await prometheus.get("http://\(address)/metrics")
            #expect(status == 200, "\(process)")
            let text = String(decoding: body, as: UTF8.self)
            #expect(try await PrometheusServer.checkMetrics(text) == nil, "\(process): \(text.prefix(4000))")
            // Bounded labels only: never an id, a pair, an amount, a key or a URL.
            #expect(Self.labelNames(text).isSubset(of: Self.allowedLabels), "\(process): \(Self.labelNames(text))")
        }
        try await prometheus.waitUntilReady()
        try await PrometheusServer.until(timeout: .seconds(30), what: "Prometheus to scrape the \(kinds.count) targets")
        {
            try await prometheus.query("up == 1").count >= kinds.count
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
        // Signalled by name through its supervisor (never by a pid that may have been reaped).
        let stopped = try await cli.run(["kill", "reducers", "--signal", "STOP"])
        #expect(stopped.out == "sent SIGSTOP to reducers (pid \(host))\n", "\(stopped)")
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

            // `bureau top`, one screen: the frozen consumer first, its rates unknown, not its last.
            try await PrometheusServer.until(timeout: .seconds(30), what: "\(age) past 4 s") {
                try await prometheus.query(age).first.map { $0.value > 4 } ?? false
            }
            let top = try await cli.run(["top", "--iterations", "1", "--max-lag-s", "1"])
            #expect(top.code == 0, "\(top.err)")
            try Self.expectTroubleFirst(top.out, consumer: "watchlist")

            // The bus restarted while the host is frozen has never heard from it: its progress
            // is unknown, and that is trouble, not a process that consumes nothing.
            let killed = try await cli.run(["kill", "bus", "--signal", "KILL"])
            #expect(killed.code == 0, "\(killed.err)")
            var unknown: (code: Int32, out: String, err: String) = (0, "", "")
            // Until the restarted bus is ready and the other consumers have reported to it again.
            try await PrometheusServer.until(timeout: .seconds(60), what: "status to say watchlist is unknown") {
                unknown = try await cli.run(["status", "--json", "--max-lag-s", "30"])
                let report = try? JSONSerialization.jsonObject(with: Data(unknown.out.utf8)) as? [String: Any]
                let problems = report?["problems"] as? [String] ?? []
                return !problems.isEmpty && problems.allSatisfy { $0.hasPrefix("watchlist's progress is unknown") }
            }
            #expect(unknown.code == 1, "\(unknown.out)")
            let afterRestart = try await cli.run(["top", "--iterations", "1", "--max-lag-s", "30"])
            try Self.expectTroubleFirst(afterRestart.out, consumer: "watchlist", unreported: true)
        } catch {
            _ = try? await cli.run(["kill", "reducers", "--signal", "CONT"])
            throw error
        }
        let resumed = try await cli.run(["kill", "reducers", "--signal", "CONT"])
        #expect(resumed.code == 0, "\(resumed.err)")
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

    /// util-linux's `script`, which gives a command a pseudo-terminal: the front-end needs one.
    static let script = ["/usr/bin/script", "/bin/script"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The front-end (`bureau tui`, on a pseudo-terminal) serves /metrics as every process does,
    /// and its output passes promtool's checks too.
    @Test(.enabled(if: Self.script != nil, "util-linux's script is not installed: the front-end needs a terminal"))
    func theFrontEndsMetricsPassPromtool() async throws {
        let directory = try TemporaryDirectory("tui-metrics")
        let bus = BusProcess(directory: directory.path)
        try await bus.start()
        let data = bus.location.dataDirectory
        let tui = try ChildProcess(
            try #require(Self.script),
            ["-qfec", "'\(BureauExecutable.path)' tui --data '\(data)'", "/dev/null"], directory: directory.path,
            name: "tui", environment: ["TERM": "xterm", "COLUMNS": "120", "LINES": "40"], openInput: true)
        defer { tui.signal(SIGKILL) }
        let record = bus.location.runDirectory + "/metrics/tui.json"
        try await PrometheusServer.until(
            timeout: .seconds(30), what: "the front-end's \(record): \(tui.standardOutput)"
        ) {
            Self.address(in: record) != nil
        }
        let address = try #require(Self.address(in: record))
        // Its consumer's figures are there once it has reported (about a second after it starts).
        var text = ""
        try await PrometheusServer.until(timeout: .seconds(30), what: "the front-end's consumer metrics: \(text)") {
            text = String(decoding: try await PrometheusServer.get("http://\(address)/metrics").body, as: UTF8.self)
            return text.contains(#"bureau_consumer_position{module="tui""#)
        }
        #expect(try await PrometheusServer.checkMetrics(text) == nil, "tui: \(text.prefix(4000))")
        #expect(Self.labelNames(text).isSubset(of: Self.allowedLabels), "tui: \(Self.labelNames(text))")
        // Stopped by its pid, as recorded: the front-end, not the terminal around it.
        let pid = try #require(Self.pid(of: "tui", in: bus.location))
        kill(pid, SIGTERM)
        #expect(await tui.exitCode(within: .seconds(20)) != nil, "the front-end stopped on SIGTERM")
        #expect(await bus.stop() == 0)
    }

    /// The `/metrics` address a process recorded in `path`.
    static func address(in path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path),
            let record = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return record["address"] as? String
    }

    /// `top`'s screen: the bus's line, the header, then `consumer`'s row first, its rates `?`
    /// (and, `unreported`, every figure `?` and `no report`); the verdict last.
    static func expectTroubleFirst(_ screen: String, consumer: String, unreported: Bool = false) throws {
        let lines = screen.split(separator: "\n").map(String.init)
        try #require(lines.count >= 4, "\(screen)")
        #expect(lines[0].hasPrefix("bus pid "), "\(screen)")
        #expect(lines[1].hasPrefix("PROCESS "), "\(screen)")
        let row = lines[2].split(separator: " ").map(String.init)
        #expect(row.prefix(2) == ["reducers", "ready"] && row.count > 6 && row[3] == consumer, "\(screen)")
        #expect(row.dropFirst(4).prefix(2) == ["?", "?"], "rates unknown: \(screen)")
        if unreported {
            #expect(row.dropFirst(6).prefix(4) == ["?", "?", "no", "report"], "\(screen)")
        }
        #expect(lines.contains { $0.hasPrefix("booking-adapter ") && $0.contains(" booking-adapter ") }, "\(screen)")
        #expect(lines.contains { $0.hasPrefix("rates-adapter ") }, "\(screen)")
        #expect(lines.last?.hasPrefix("trouble: ") == true && lines.last?.contains(consumer) == true, "\(screen)")
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
