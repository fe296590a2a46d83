import BusTesting
import Foundation
import Guards
import HTTPCalls
import TestServers

/// A real Prometheus (Debian's `prometheus`, which `tools/setup` installs and never starts as a
/// service) that a test starts on a loopback port, scraping what a file-based service-discovery
/// file lists every second, and asks through its HTTP API. Stopped by pid.
public final class PrometheusServer: Sendable {
    /// The `prometheus` binary, if installed.
    public static var executable: String? { which("prometheus") }
    /// `promtool`, which comes with it.
    public static var promtool: String? { which("promtool") }

    public let port: Int
    private let process: ChildProcess

    /// Starts Prometheus with its data in `directory`, scraping the targets `targetsFile` lists
    /// (a `file_sd_configs` file) every `scrapeInterval`.
    public init(directory: String, targetsFile: String, scrapeInterval: Duration = .seconds(1)) throws {
        guard let executable = Self.executable else {
            throw TestSupportError("prometheus is not installed (tools/setup installs it)")
        }
        let seconds = max(1, scrapeInterval.inWholeSeconds)
        let configuration = """
            global:
              scrape_interval: \(seconds)s
              scrape_timeout: \(seconds)s
              evaluation_interval: \(seconds)s
            scrape_configs:
              - job_name: bureau
                file_sd_configs:
                  - files: ["\(targetsFile)"]
                    refresh_interval: 1s
            """
        let configPath = directory + "/prometheus.yml"
        try configuration.write(toFile: configPath, atomically: true, encoding: .utf8)
        port = try TCPPorts.free()
        process = try ChildProcess(
            executable,
            [
                "--config.file=\(configPath)", "--storage.tsdb.path=\(directory)/tsdb",
                "--web.listen-address=127.0.0.1:\(port)", "--log.level=warn",
            ], directory: directory, name: "prometheus")
    }

    /// What Prometheus printed, for a failure's message.
    public var output: String {
        (try? String(contentsOfFile: process.stderrPath, encoding: .utf8))?.suffix(2000).description ?? ""
    }

    /// Returns once Prometheus answers `/-/ready`; throws if it exits or `timeout` passes.
    public func waitUntilReady(timeout: Duration = .seconds(30)) async throws {
        try await Self.until(timeout: timeout, what: "Prometheus to be ready: \(output)") {
            guard process.isRunning else { throw TestSupportError("prometheus exited: \(output)") }
            return (try? await get("http://127.0.0.1:\(port)/-/ready"))?.status == 200
        }
    }

    /// The instant vector `promql` evaluates to now: each series' labels and value.
    public func query(_ promql: String) async throws -> [(labels: [String: String], value: Double)] {
        var components = URLComponents(string: "http://127.0.0.1:\(port)/api/v1/query")
        components?.queryItems = [URLQueryItem(name: "query", value: promql)]
        guard let url = components?.url?.absoluteString else { throw TestSupportError("bad query \(promql)") }
        let (status, body) = try await get(url)
        guard status == 200,
            let json = try JSONSerialization.jsonObject(with: body) as? [String: Any],
            let data = json["data"] as? [String: Any], let result = data["result"] as? [[String: Any]]
        else { throw TestSupportError("Prometheus answered \(status): \(String(decoding: body, as: UTF8.self))") }
        return result.compactMap { series in
            guard let labels = series["metric"] as? [String: String], let value = series["value"] as? [Any],
                value.count == 2, let text = value[1] as? String, let number = Double(text)
            else { return nil }
            return (labels, number)
        }
    }

    /// A GET's status and body.
    public func get(_ url: String) async throws -> (status: UInt, body: Data) {
        try await Self.get(url)
    }

    /// A GET's status and body: a process's /metrics, say.
    public static func get(_ url: String) async throws -> (status: UInt, body: Data) {
        let response = try await HTTPCalls.perform(HTTPRequest(url: url), timeout: .seconds(5), bodyLimit: 16 << 20)
        return (UInt(clamping: response.status), response.body)
    }

    /// Stops the server (SIGTERM, then SIGKILL after 10 s).
    public func stop() async {
        process.signal(SIGTERM)
        let killer = Task {
            try await Task.sleep(for: .seconds(10))
            process.signal(SIGKILL)
        }
        _ = await process.exitStatus()
        killer.cancel()
    }

    /// Asks `condition` every 100 ms until it holds; throws naming `what` after `timeout`.
    /// For servers of others (Prometheus scrapes on its own clock): there is no event to await.
    public static func until(
        timeout: Duration, what: @autoclosure () -> String, _ condition: () async throws -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestSupportError("waited \(timeout) for \(what())")
    }

    /// Runs `promtool check metrics` on `text`: nil if it passes, else what it said. The wait
    /// for promtool is on a thread of its own, off the cooperative pool.
    public static func checkMetrics(_ text: String) async throws -> String? {
        guard let promtool else {
            throw TestSupportError("promtool is not installed (tools/setup installs prometheus)")
        }
        return try await OwnThread.run(name: "test-promtool") { try runPromtool(promtool, on: text) }
    }

    /// `promtool check metrics` on `text`, waited for on the caller's thread.
    private static func runPromtool(_ promtool: String, on text: String) throws -> String? {
        let (ended, said) = try SystemCommand.outcome([promtool, "check", "metrics"], input: Data(text.utf8))
        return ended.succeeded ? nil : said
    }

    private static func which(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return (path.split(separator: ":").map { "\($0)/\(name)" } + ["/usr/bin/\(name)"])
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
