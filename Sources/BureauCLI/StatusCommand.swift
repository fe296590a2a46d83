import ArgumentParser
import Bus
import Foundation
import Guards

/// `bureau status`: the deployment's health once, for people and scripts.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show every process's state and every consumer's lag once; exit 1 if anything is wrong.",
        discussion: HelpText.prose(
            """
            What `bureau top` shows, once: the bus's commit rate, batch size, fsync and
            acknowledgement latency (p50, p99) and subscribers; then each process with its
            state and restarts (from the supervisor of the data directory, or, for a bus given
            with --bus, from the log's process events), each consumer's rates in and out, its
            lag in events and in seconds and how long ago it last reported, and the last error
            each process raised. Lag is the bus's view: a consumer that stopped keeps falling
            behind there, and one whose lag cannot be known is shown as `?`, never as 0.

            A consumer a process runs (the modules of `run`, from the command line its
            `ProcessStarted` event gives) that the bus has no report from is shown with `?` and
            `no report`: its progress is unknown, as it is after the bus restarted or failed over
            while that consumer was stopped. A process whose command line this build cannot
            read (a `run` of modules it does not know, a command of another version) is
            trouble too: what it consumes is unknown.

            Exits 1 when the bus does not answer, the log's system events cannot be read to the
            end within 5 s (the process list is incomplete), a process is not ready, or a
            consumer is more than --max-lag-s behind, has not reported for longer, has an unknown
            lag, or has no report at all: a health check for scripts.
            """)
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var connection: BusConnectionOptions
    @Flag(help: "Print it as JSON.") var json = false
    @Option(
        help:
            "A consumer further behind than this many seconds, or silent for longer, is trouble, 1 to 86400. (default: 30)",
        transform: BoundedNumber.integers(in: 1...86_400))
    var maxLagS = 30

    func run() async throws {
        let client = try connection.client(process: "status", global: global, upcasting: try Composition.upcasting())
        defer { client.close() }
        let probe = HealthProbe(client: client, location: global.location, local: try connection.remote() == nil)
        // The log's system events: each process's last error, what it consumes (and its state,
        // without a supervisor). Not read to the end, the health says the list is incomplete.
        _ = await probe.readSystemEvents(timeout: .seconds(5))
        let health = await probe.health(maxLagSeconds: Double(maxLagS))
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(StatusJSON(health)), as: UTF8.self))
        } else {
            print(health.render())
        }
        if !health.healthy { throw ExitCode(1) }
    }

    /// `status --json`: the health with its verdict.
    struct StatusJSON: Encodable {
        let healthy: Bool
        let problems: [String]
        let bus: DeploymentHealth.Bus?
        let rows: [DeploymentHealth.Row]
        let maxLagSeconds: Double

        init(_ health: DeploymentHealth) {
            healthy = health.healthy
            problems = health.problems
            bus = health.bus
            rows = health.rows
            maxLagSeconds = health.maxLagSeconds
        }
    }
}
