import BureauSchemas
import Testing

@testable import BureauCLI

/// What `bureau status` and `top` make of the bus's figures and the processes: trouble on top,
/// unknown shown as unknown.
struct DeploymentHealthTests {
    static func process(_ name: String, pid: Int32, up: Bool = true, error: String? = nil) -> DeploymentHealth.Process {
        DeploymentHealth.Process(
            name: name, pid: pid, state: up ? "ready" : "crash-looping", up: up, restarts: up ? 0 : 5,
            uptimeSeconds: up ? 60 : nil, lastExit: nil, lastError: error)
    }

    static func consumer(
        _ name: String, pid: UInt32, lagEvents: UInt64 = 0, lagMs: UInt64? = 0, heardMs: UInt64 = 400
    ) -> Bureau_Bus_ConsumerStatus {
        var status = Bureau_Bus_ConsumerStatus()
        status.consumer = name
        status.process = "reducers"
        status.pid = pid
        status.live = true
        status.lagEvents = lagEvents
        if let lagMs {
            status.lagTimeKnown = true
            status.lagMs = lagMs
        }
        status.progressAgeMs = heardMs
        return status
    }

    static func stats(_ consumers: [Bureau_Bus_ConsumerStatus]) -> Bureau_Bus_BusStats {
        var stats = Bureau_Bus_BusStats()
        stats.head = 120
        stats.consumers = consumers
        return stats
    }

    @Test func aHealthyDeploymentSaysSoAndPassesTheCheck() {
        let health = DeploymentHealth(
            stats: Self.stats([Self.consumer("watchlist", pid: 11)]), busProblem: nil,
            processes: [Self.process("bus", pid: 10), Self.process("reducers", pid: 11)], maxLagSeconds: 30)
        #expect(health.healthy)
        #expect(health.rows.map { $0.consumer?.consumer ?? "-" } == ["-", "watchlist"], "by name: bus, reducers")
        #expect(health.render().contains("healthy: every process up"))
    }

    @Test func whatProcessesSaidIsShownEscapedOneRowEach() {
        // Given a process whose last error (an ErrorRaised's message, from the log) holds a
        // terminal's escape sequence and a forged line
        let hostile = "\u{1B}]0;owned\u{07}\n2026-01-01 healthy"
        let health = DeploymentHealth(
            stats: Self.stats([]), busProblem: nil,
            processes: [
                Self.process("bus", pid: 10), Self.process("rates" + hostile, pid: 13, up: false, error: hostile),
            ],
            maxLagSeconds: 30)
        // When it is shown, then nothing of it reaches the terminal raw, and its row is one line
        let text = health.render()
        #expect(!text.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" }, "\(text)")
        #expect(text.contains("\\u{1B}]0;owned"))
        #expect(!text.split(separator: "\n").contains { $0.hasPrefix("2026-01-01 healthy") }, "\(text)")
    }

    @Test func troubleComesFirstAndFailsTheCheck() {
        let health = DeploymentHealth(
            stats: Self.stats([
                Self.consumer("watchlist", pid: 11),
                Self.consumer("alerts", pid: 11, lagEvents: 900, lagMs: 45_000),
                Self.consumer("booking-adapter", pid: 12, lagEvents: 3, lagMs: nil),
            ]),
            busProblem: nil,
            processes: [
                Self.process("bus", pid: 10), Self.process("reducers", pid: 11),
                Self.process("booking-adapter", pid: 12), Self.process("rates-adapter", pid: 13, up: false),
            ], maxLagSeconds: 30)
        #expect(!health.healthy)
        #expect(
            health.rows.map { $0.consumer?.consumer ?? $0.process?.name ?? "" } == [
                "rates-adapter", "alerts", "booking-adapter", "bus", "watchlist",
            ])
        #expect(health.problems.contains("rates-adapter is crash-looping"))
        #expect(health.problems.contains { $0.hasPrefix("alerts is 45.0 s behind (900 events)") })
        #expect(health.problems.contains("booking-adapter's lag is unknown (3 events behind)"))
        let screen = health.render()
        // An unknown lag is a question mark, never 0.
        let line = screen.split(separator: "\n").first { $0.contains("booking-adapter  ") && $0.contains("  3  ") }
        #expect(line?.contains("  ?  ") == true, "\(screen)")
    }

    @Test func aConsumerThatStoppedReportingIsTroubleEvenAtNoLag() {
        let health = DeploymentHealth(
            stats: Self.stats([Self.consumer("watchlist", pid: 11, heardMs: 31_000)]), busProblem: nil,
            processes: [Self.process("reducers", pid: 11)], maxLagSeconds: 30)
        #expect(!health.healthy)
        #expect(health.problems.first?.contains("has not reported for") == true)
    }

    /// A bus restarted while a host was frozen has no report from its consumers: they are
    /// unknown, shown as `?`, and trouble, not a process that consumes nothing.
    @Test func aConsumerItsProcessRunsThatTheBusHasNoReportOfIsUnknownAndTrouble() throws {
        // Given reducers runs watchlist and alerts, and the bus has heard only from alerts
        var reducers = Self.process("reducers", pid: 11)
        reducers.expectedConsumers = ["watchlist", "alerts"]
        let health = DeploymentHealth(
            stats: Self.stats([Self.consumer("alerts", pid: 11)]), busProblem: nil,
            processes: [Self.process("bus", pid: 10), reducers], maxLagSeconds: 30)
        // Then the check fails, naming watchlist's progress as unknown
        #expect(!health.healthy)
        #expect(health.problems.count == 1)
        #expect(health.problems.first?.hasPrefix("watchlist's progress is unknown: reducers runs it") == true)
        // And its row comes first, every figure unknown: never 0, never `-`
        let first = try #require(health.rows.first)
        #expect(first.consumer?.consumer == "watchlist" && first.consumer?.reported == false)
        #expect(first.consumer?.lagEvents == nil && first.consumer?.position == nil)
        let line = try #require(health.render().split(separator: "\n").first { $0.contains("watchlist") })
        let columns: [String] = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let expected = ["reducers", "ready", "0", "watchlist", "?", "?", "?", "?", "no", "report", "-"]
        #expect(columns == expected, "\(line)")
    }

    /// A process started with a command line this build cannot read (another version's) may
    /// consume something: its progress is unknown, and trouble, not a process that consumes nothing.
    @Test func aProcessWhoseCommandLineThisBuildCannotReadIsTrouble() {
        // Given reducers' command line could not be read, and the bus has no report from it
        var reducers = Self.process("reducers", pid: 11)
        reducers.expectedConsumers = nil
        // When the health is judged
        let health = DeploymentHealth(
            stats: Self.stats([]), busProblem: nil, processes: [Self.process("bus", pid: 10), reducers],
            maxLagSeconds: 30)
        // Then the check fails, saying why
        #expect(!health.healthy)
        #expect(health.problems.count == 1)
        #expect(health.problems.first?.hasPrefix("what reducers consumes is unknown") == true)
    }

    @Test func aProcessThatIsDownHasNoUnknownConsumersBesideItsOwnProblem() {
        var reducers = Self.process("reducers", pid: 11, up: false)
        reducers.expectedConsumers = ["watchlist"]
        let health = DeploymentHealth(
            stats: Self.stats([]), busProblem: nil, processes: [reducers], maxLagSeconds: 30)
        #expect(health.problems == ["reducers is crash-looping"])
    }

    /// The log's system events not read to the end: processes may be missing, so the check fails.
    @Test func anIncompleteProcessListFailsTheCheck() {
        let health = DeploymentHealth(
            stats: Self.stats([]), busProblem: nil, processes: [Self.process("bus", pid: 10)],
            processesProblem: "the process list is incomplete: …", maxLagSeconds: 30)
        #expect(!health.healthy)
        #expect(health.problems == ["the process list is incomplete: …"])
        #expect(health.render().hasSuffix("trouble: the process list is incomplete: …"))
    }

    /// A consumer whose rates the bus cannot tell (its last report stale) shows `?`, not `-`
    /// (nothing to show) and not its old rates.
    @Test func aConsumerOfUnknownRatesShowsAQuestionMark() throws {
        var status = Self.consumer("watchlist", pid: 11)
        status.recentWindowMs = 0
        let health = DeploymentHealth(
            stats: Self.stats([status]), busProblem: nil, processes: [Self.process("reducers", pid: 11)],
            maxLagSeconds: 30)
        let line = try #require(health.render().split(separator: "\n").first { $0.contains("watchlist") })
        #expect(
            line.split(separator: " ", omittingEmptySubsequences: true).prefix(6) == [
                "reducers", "ready", "0", "watchlist", "?", "?",
            ], "\(line)")
    }

    @Test func aBusThatDoesNotAnswerFailsTheCheck() {
        let health = DeploymentHealth(
            stats: nil, busProblem: "the bus does not answer: no answer", processes: [], maxLagSeconds: 30)
        #expect(!health.healthy)
        #expect(health.render().hasPrefix("bus: the bus does not answer"))
    }
}
