import ArgumentParser
import Bus
import CoreMetrics
import EventLog
import Foundation
import Guards
import Hummingbird
import Logging
import Metrics
import Prometheus
import ServiceLifecycle
import Synchronization

/// Serves a process's metrics in Prometheus' text format at `/metrics` over HTTP, and records
/// where in the data directory (`run/metrics/<process>.json`), for `bureau up`'s targets file
/// and for people.
///
/// Loopback on a free port unless told otherwise (``MetricsOptions``). What goes wrong with it
/// never stops the process: a port in use, or nothing scraping for a minute, is said once in
/// the log and counted.
final class MetricsEndpoint: Service, Sendable {
    let process: String
    let location: BusLocation
    let host: String
    let port: Int
    let registry: PrometheusCollectorRegistry
    private let beforeScrape: @Sendable () -> Void
    private let logger: Logger
    private let scrapes = Atomic<Int>(0)
    private let failures: Metrics.Counter
    private let scraped: Metrics.Counter
    private let idle: Metrics.Counter

    /// Metric names and what they mean (README, "Watching it run").
    static let help: [String: String] = [
        "bureau_metrics_endpoint_failures_total":
            "Times the process could not serve /metrics (its address in use or not its to bind); it goes on without.",
        "bureau_metrics_scrapes_total": "Requests for /metrics the process answered.",
        "bureau_metrics_idle_periods_total":
            "Periods of a minute in which nothing asked for /metrics (no Prometheus is watching).",
    ]

    /// When to try an address it could not bind again.
    static let retry = Backoff(initial: .seconds(1), maximum: .seconds(15), jitter: 0)

    /// How long without a scrape before the log says nobody scrapes.
    static let idleInterval: Duration = .seconds(60)

    init(
        process: String, location: BusLocation, host: String, port: Int, registry: PrometheusCollectorRegistry,
        logger: Logger, beforeScrape: @escaping @Sendable () -> Void = {}
    ) {
        self.process = process
        self.location = location
        self.host = host
        self.port = port
        self.registry = registry
        self.logger = logger
        self.beforeScrape = beforeScrape
        failures = Metrics.Counter(label: "bureau_metrics_endpoint_failures_total")
        scraped = Metrics.Counter(label: "bureau_metrics_scrapes_total")
        idle = Metrics.Counter(label: "bureau_metrics_idle_periods_total")
    }

    /// Where it records its address: `<data>/run/metrics/<process>.json`.
    static func directory(_ location: BusLocation) -> String { location.runDirectory + "/metrics" }
    var recordPath: String { Self.directory(location) + "/" + Self.fileName(process) }

    static func fileName(_ process: String) -> String {
        String(process.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "+" ? $0 : "_" }) + ".json"
    }

    func run() async throws {
        let router = Router()
        let registry = self.registry
        let beforeScrape = self.beforeScrape
        router.get("/metrics") { [self] _, _ -> Response in
            beforeScrape()
            scrapes.add(1, ordering: .relaxed)
            scraped.increment()
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(
                status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
        var quiet = logger
        quiet.logLevel = .warning
        await withDiscardingTaskGroup { group in
            group.addTask { await self.watchForScrapes() }
            // An address it cannot bind (in use, not its own) is said once and counted, and
            // tried again after a backoff: the process goes on without /metrics meanwhile.
            var attempt = 0
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                let application = Application(
                    router: router,
                    configuration: .init(address: .hostname(host, port: port), serverName: "bureau-metrics"),
                    onServerRunning: { [self] channel in write(port: channel.localAddress?.port ?? 0) },
                    logger: quiet)
                do {
                    try await application.run()
                    break
                } catch {
                    attempt += 1
                    failures.increment()
                    if attempt == 1 {
                        logger.error(
                            "cannot serve /metrics; going on without it, and trying again now and then",
                            metadata: ["metrics.address": "\(host):\(port)", "metrics.error": "\(error)"])
                    }
                }
                let delay = Self.retry.nominalDelay(attempt: attempt)
                guard (try? await cancelWhenGracefulShutdown({ try await Task.sleep(for: delay) })) != nil else {
                    break
                }
            }
            group.cancelAll()
        }
        remove()
    }

    /// Says once when a minute passes with nothing asking for /metrics, and counts such minutes.
    private func watchForScrapes() async {
        var said = false
        var seen = scrapes.load(ordering: .relaxed)
        while !Task.isCancelled {
            // Periodic work: one look a minute.
            guard (try? await cancelWhenGracefulShutdown({ try await Task.sleep(for: Self.idleInterval) })) != nil
            else { return }
            let now = scrapes.load(ordering: .relaxed)
            if now == seen {
                idle.increment()
                if !said {
                    said = true
                    logger.notice(
                        "nothing has asked for /metrics in a minute (no Prometheus is watching this process)",
                        metadata: ["metrics.record": "\(recordPath)"])
                }
            }
            seen = now
        }
    }

    /// What `run/metrics/<process>.json` holds.
    struct Record: Codable, Equatable {
        var process: String
        var pid: Int32
        /// `host:port`, as Prometheus names a target.
        var address: String
        var url: String
    }

    private func write(port: Int) {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        let record = Record(
            process: process, pid: getpid(), address: "\(hostPart):\(port)",
            url: "http://\(hostPart):\(port)/metrics")
        do {
            try OwnerOnly.makeDirectory(Self.directory(location))
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let temporary = recordPath + ".new"
            try encoder.encode(record).write(to: URL(fileURLWithPath: temporary))
            guard rename(temporary, recordPath) == 0 else { throw CLIError("cannot rename \(temporary)") }
            logger.info("serving /metrics", metadata: ["metrics.url": "\(record.url)"])
        } catch {
            logger.error(
                "cannot record where /metrics is served",
                metadata: ["metrics.path": "\(recordPath)", "metrics.error": "\(error)"])
        }
    }

    /// Removes the record, if it is still this process's (one it cannot read is not).
    private func remove() {
        guard let data = FileManager.default.contents(atPath: recordPath),
            let record = try? JSONDecoder().decode(Record.self, from: data), record.pid == getpid()
        else { return }
        unlink(recordPath)
    }
}

extension MetricsEndpoint {
    /// Its place in a process's service group: whatever becomes of it, the others go on.
    var inGroup: ServiceGroupConfiguration.ServiceConfiguration {
        .init(service: self, successTerminationBehavior: .ignore, failureTerminationBehavior: .ignore)
    }
}

/// Where a process serves `/metrics`: loopback on a free port by default.
struct MetricsOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Serve /metrics at HOST:PORT instead of 127.0.0.1 on a free port (recorded in <data>/run/metrics/). "
                + "Any address but loopback shows the figures to whoever can reach it.",
            valueName: "host:port"))
    var metricsAddress: String?

    @Flag(help: "Serve no /metrics (swift-metrics records nothing).")
    var noMetrics = false

    func validate() throws {
        if let metricsAddress, Self.parse(metricsAddress) == nil {
            throw ValidationError(
                "--metrics-address takes HOST:PORT with a port from 0 to 65535, not '\(metricsAddress)'")
        }
    }

    static func parse(_ address: String) -> (host: String, port: Int)? {
        guard let colon = address.lastIndex(of: ":") else { return nil }
        var host = String(address[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        // The caller says what a good address is; the refusal's own words are not needed here.
        guard !host.isEmpty,
            let port = try? BoundedNumber.integer(String(address[address.index(after: colon)...]), in: 0...65535)
        else { return nil }
        return (host, port)
    }

    /// Bootstraps swift-metrics with Prometheus (once per process) and returns the endpoint
    /// that serves it; nil with --no-metrics, when libraries record into swift-metrics' no-op.
    func endpoint(
        process: String, location: BusLocation, logger: Logger, beforeScrape: @escaping @Sendable () -> Void = {}
    ) -> MetricsEndpoint? {
        guard !noMetrics else { return nil }
        let factory = MetricsBootstrap.factory
        let (host, port) = metricsAddress.flatMap(Self.parse) ?? ("127.0.0.1", 0)
        return MetricsEndpoint(
            process: process, location: location, host: host, port: port, registry: factory.registry, logger: logger,
            beforeScrape: beforeScrape)
    }
}

/// The process's one bootstrap of swift-metrics.
enum MetricsBootstrap {
    static let factory: PrometheusFactory = {
        let factory = PrometheusFactory()
        MetricsSystem.bootstrap(factory)
        return factory
    }()
}
