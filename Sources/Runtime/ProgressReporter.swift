import BureauSchemas
import Bus
import Logging
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Tells the bus, about once a second, how far each consumer of this process has got, and hands
/// their counts to swift-metrics (``ConsumerMetrics/flush(pid:now:)``).
///
/// The bus computes each consumer's lag from the last report it had (INTERNALS.md, "Lag is
/// the bus's to tell"): a consumer stopped with its process (SIGSTOP, a partition) reports
/// nothing, and the bus sees it fall behind. On graceful shutdown it says the consumers are
/// leaving, so that a process stopped on purpose is not shown as stuck.
public final class ProgressReporter: Service, Sendable {
    private let client: any EventBus
    private let interval: Duration
    private let logger: Logger
    private let consumers = Mutex<[ConsumerMetrics]>([])

    public init(client: any EventBus, interval: Duration = .seconds(1), logger: Logger) {
        self.client = client
        self.interval = interval
        self.logger = logger
    }

    /// A consumer of this process, reported from now on.
    public func consumer(_ name: String) -> ConsumerMetrics {
        let metrics = ConsumerMetrics(consumer: name, process: client.process)
        consumers.withLock { $0.append(metrics) }
        return metrics
    }

    /// Reports every consumer's progress now; those whose progress is unknown are left out.
    public func reportNow() {
        let pid = getpid()
        let now = ContinuousClock.now
        let progress = consumers.withLock { $0 }.compactMap { $0.flush(pid: pid, now: now) }
        client.report(progress)
    }

    public func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            reportNow()
            // Periodic work, not a wait for an event: the report is due again in a second.
            try? await cancelWhenGracefulShutdown { [interval] in try await Task.sleep(for: interval) }
        }
        let pid = getpid()
        let leaving = consumers.withLock { $0 }.map { $0.leaving(pid: pid) }
        guard !leaving.isEmpty else { return }
        client.report(leaving)
        // A ping answered on the same socket comes after the report: it has reached the bus, and
        // closing the connection now cannot drop it. Bounded: a bus that is gone is not waited for.
        do {
            _ = try await client.ping(timeout: .milliseconds(500))
            logger.debug("told the bus this process's consumers are leaving")
        } catch {
            // The bus then shows them lagging until their reports are 3 s old and it calls them stopped.
            logger.notice(
                "could not confirm the bus heard this process's consumers are leaving",
                metadata: ["error.description": "\(error)"])
        }
    }
}
