import BureauSchemas
import Bus
import Foundation
import Guards
import Supervisor

/// What `bureau status` and `bureau top` show: the bus's figures, each process and the
/// consumers it runs with their lag as the bus sees it, and what is wrong, sorted so that
/// trouble is on top. Pure: made from what was gathered, rendered as text or JSON.
struct DeploymentHealth: Encodable, Equatable {
    /// A process, as the supervisor (or, without one, the log's process events) tells it.
    struct Process: Encodable, Equatable {
        var name: String
        var pid: Int32
        /// ready, starting, restarting, exited… as `bureau ps` says; running or stopped from the log.
        var state: String
        var up: Bool
        /// nil when not known (a remote deployment's restarts are not in the log).
        var restarts: Int?
        var uptimeSeconds: Double?
        var lastExit: String?
        var lastError: String?
        /// The consumers it runs, from its command line (`run MODULES`, `tui`): each must have
        /// reported to the bus, or its progress is unknown. Empty when nothing tells them; nil
        /// when its command line is one this build cannot read (started by another version):
        /// what it consumes is then unknown, and trouble, never "nothing".
        var expectedConsumers: [String]? = []
    }

    /// One consumer as the bus sees it, or one its process runs that the bus has no report of.
    struct Consumer: Encodable, Equatable {
        var consumer: String
        var process: String
        /// false: its process runs it, but the bus has no report from it (the consumer is
        /// stopped or cut off, and the bus restarted or failed over since it last heard from
        /// it): nothing of its progress is known, and each figure below is nil.
        var reported: Bool
        var pid: UInt32
        var position: UInt64?
        var live: Bool?
        var lagEvents: UInt64?
        /// nil: unknown (not reported, or the oldest event not handled could not be read).
        var lagSeconds: Double?
        var progressAgeSeconds: Double?
        /// nil: unknown (not reported, only one report yet, or the last one is stale).
        var inPerSecond: Double?
        var outPerSecond: Double?
        var snapshotAgeSeconds: Double?

        /// A consumer `process` runs that has not reported to the bus.
        init(unreported name: String, of process: Process) {
            consumer = name
            self.process = process.name
            reported = false
            pid = UInt32(bitPattern: process.pid)
        }

        init(_ status: Bureau_Bus_ConsumerStatus) {
            consumer = status.consumer
            process = status.process
            reported = true
            pid = status.pid
            position = status.position
            live = status.live
            lagEvents = status.lagEvents
            lagSeconds = status.lagTimeKnown ? Duration.milliseconds(status.lagMs).inSeconds : nil
            progressAgeSeconds = Duration.milliseconds(status.progressAgeMs).inSeconds
            if status.recentWindowMs > 0 {
                let seconds = Duration.milliseconds(status.recentWindowMs).inSeconds
                inPerSecond = Double(status.recentApplied) / seconds
                outPerSecond = Double(status.recentOutputs) / seconds
            }
            snapshotAgeSeconds = status.snapshotKnown ? Duration.milliseconds(status.snapshotAgeMs).inSeconds : nil
        }
    }

    /// The bus's own figures.
    struct Bus: Encodable, Equatable {
        var pid: UInt32
        var uptimeSeconds: Double
        var head: UInt64
        var eventsPerSecond: Double?
        var commitsPerSecond: Double?
        var batchSize: Double?
        var fsyncP50Ms: Double?
        var fsyncP99Ms: Double?
        var ackP50Ms: Double?
        var ackP99Ms: Double?
        var subscribers: UInt64
        var subscriberGaps: UInt64
        var logBytes: UInt64?
        var logSegments: UInt64?

        init(_ stats: Bureau_Bus_BusStats) {
            pid = stats.pid
            uptimeSeconds = Duration.milliseconds(stats.uptimeMs).inSeconds
            head = stats.head
            if stats.recentWindowMs > 0 {
                let seconds = Duration.milliseconds(stats.recentWindowMs).inSeconds
                eventsPerSecond = Double(stats.recentEvents) / seconds
                commitsPerSecond = Double(stats.recentCommits) / seconds
            }
            if stats.recentCommits > 0 { batchSize = Double(stats.recentEvents) / Double(stats.recentCommits) }
            if stats.syncP50Us > 0 {
                fsyncP50Ms = Duration.microseconds(stats.syncP50Us).inFractionalMilliseconds
                fsyncP99Ms = Duration.microseconds(stats.syncP99Us).inFractionalMilliseconds
            }
            if stats.ackP50Us > 0 {
                ackP50Ms = Duration.microseconds(stats.ackP50Us).inFractionalMilliseconds
                ackP99Ms = Duration.microseconds(stats.ackP99Us).inFractionalMilliseconds
            }
            subscribers = stats.subscribers
            subscriberGaps = stats.subscriberGaps
            if stats.logSizeKnown {
                logBytes = stats.logBytes
                logSegments = stats.logSegments
            }
        }
    }

    /// A row of the table: a process and one of its consumers (or none), with how bad it looks.
    struct Row: Encodable, Equatable {
        var process: Process?
        var consumer: Consumer?
        /// What is wrong with it; empty when nothing is.
        var problems: [String]
    }

    var bus: Bus?
    /// Why the bus could not be asked, when it could not.
    var busProblem: String?
    /// Why the processes shown may not be all there are, or not as they are (the log's system
    /// events could not be read to the end), when so.
    var processesProblem: String?
    var rows: [Row]
    var maxLagSeconds: Double
    var healthy: Bool { busProblem == nil && processesProblem == nil && rows.allSatisfy(\.problems.isEmpty) }

    /// - Parameters:
    ///   - processes: the deployment's processes; empty when nothing tells them.
    ///   - processesProblem: why `processes` may be incomplete, if it may.
    ///   - maxLagSeconds: a consumer further behind than this, or silent for longer, is in trouble.
    init(
        stats: Bureau_Bus_BusStats?, busProblem: String?, processes: [Process], processesProblem: String? = nil,
        maxLagSeconds: Double
    ) {
        self.maxLagSeconds = maxLagSeconds
        self.busProblem = busProblem
        self.processesProblem = processesProblem
        bus = stats.map(Bus.init)
        let consumers = (stats?.consumers ?? []).map(Consumer.init)
        var rows: [Row] = []
        var matched = Set<Int>()
        for process in processes {
            // A process's consumers are those that reported its pid.
            let own = consumers.indices.filter {
                process.pid > 0 && consumers[$0].pid == UInt32(bitPattern: process.pid)
            }
            matched.formUnion(own)
            var processRows = own.map { Row(process: process, consumer: consumers[$0], problems: []) }
            // One it runs that the bus has no report of is unknown, not a process that consumes
            // nothing (a bus restarted while the consumer was frozen has never heard from it).
            // A process that is not up is trouble already, and runs nothing.
            if process.up {
                let reported = Set(own.map { consumers[$0].consumer })
                for name in process.expectedConsumers ?? [] where !reported.contains(name) {
                    processRows.append(
                        Row(process: process, consumer: Consumer(unreported: name, of: process), problems: []))
                }
            }
            rows += processRows.isEmpty ? [Row(process: process, consumer: nil, problems: [])] : processRows
        }
        for index in consumers.indices where !matched.contains(index) {
            rows.append(Row(process: nil, consumer: consumers[index], problems: []))
        }
        for index in rows.indices { rows[index].problems = Self.problems(of: rows[index], maxLag: maxLagSeconds) }
        self.rows = rows.sorted(by: Self.troubleFirst)
    }

    static func problems(of row: Row, maxLag: Double) -> [String] {
        var problems: [String] = []
        if let process = row.process, !process.up {
            problems.append("\(process.name) is \(process.state)")
        }
        if let process = row.process, process.up, process.expectedConsumers == nil, row.consumer == nil {
            problems.append(
                "what \(process.name) consumes is unknown: its command line is not one this build of bureau "
                    + "reads (started by another version?), so its progress cannot be checked")
        }
        if let consumer = row.consumer {
            guard consumer.reported else {
                problems.append(
                    "\(consumer.consumer)'s progress is unknown: \(consumer.process) runs it, and the bus has no "
                        + "report from it (it is stopped or cut off, and the bus restarted since it last heard)")
                return problems
            }
            if let age = consumer.progressAgeSeconds, age > maxLag {
                problems.append(
                    "\(consumer.consumer) has not reported for \(Self.seconds(age)): it is stopped or cut off")
            }
            let events = consumer.lagEvents ?? 0
            if let lag = consumer.lagSeconds, lag > maxLag {
                problems.append(
                    "\(consumer.consumer) is \(Self.seconds(lag)) behind (\(events) events), over \(Self.seconds(maxLag))"
                )
            } else if consumer.lagSeconds == nil {
                problems.append("\(consumer.consumer)'s lag is unknown (\(events) events behind)")
            }
        }
        return problems
    }

    /// Processes down first, then consumers in trouble, then the most behind.
    static func troubleFirst(_ left: Row, _ right: Row) -> Bool {
        func score(_ row: Row) -> Int {
            if let process = row.process, !process.up { return 3 }
            if !row.problems.isEmpty { return 2 }
            if row.process?.lastError != nil { return 1 }
            return 0
        }
        let (a, b) = (score(left), score(right))
        if a != b { return a > b }
        let (lagA, lagB) = (left.consumer?.lagSeconds ?? 0, right.consumer?.lagSeconds ?? 0)
        if lagA != lagB { return lagA > lagB }
        let nameA = (left.process?.name ?? left.consumer?.process ?? "") + (left.consumer?.consumer ?? "")
        let nameB = (right.process?.name ?? right.consumer?.process ?? "") + (right.consumer?.consumer ?? "")
        return nameA < nameB
    }

    /// Every problem, for a health check's message.
    var problems: [String] {
        [busProblem, processesProblem].compactMap { $0 } + rows.flatMap(\.problems)
    }

    // MARK: Text

    /// The screen: the bus's line, then the table.
    func render(width: Int = 160) -> String {
        var lines: [String] = []
        if let bus {
            var parts = [
                "bus pid \(bus.pid)", "up \(Duration.seconds(saturating: bus.uptimeSeconds).compactText())",
                "head \(bus.head)",
                "commit \(Self.rate(bus.eventsPerSecond)) ev/s in \(Self.rate(bus.commitsPerSecond)) commits/s",
                "batch \(bus.batchSize.map { String(format: "%.1f", $0) } ?? "-")",
                "fsync p50 \(Self.milliseconds(bus.fsyncP50Ms)) p99 \(Self.milliseconds(bus.fsyncP99Ms))",
                "ack p50 \(Self.milliseconds(bus.ackP50Ms)) p99 \(Self.milliseconds(bus.ackP99Ms))",
                "subscribers \(bus.subscribers)", "gaps \(bus.subscriberGaps)",
            ]
            if let bytes = bus.logBytes, let segments = bus.logSegments {
                parts.append("log \(Self.bytes(bytes)) in \(segments) segment\(segments == 1 ? "" : "s")")
            }
            lines.append(parts.joined(separator: "  "))
        } else {
            lines.append("bus: \(TerminalText.escaped(busProblem ?? "unknown"))")
        }
        let header = [
            "PROCESS", "STATE", "RESTARTS", "CONSUMER", "IN/S", "OUT/S", "LAG EV", "LAG S", "HEARD", "LAST ERROR",
        ]
        var table = [header]
        for row in rows {
            let process = row.process
            let consumer = row.consumer
            // "-": nothing to show (no consumer); "?": a consumer's figure nobody knows, never 0.
            func known(_ figure: (Consumer) -> String?) -> String {
                guard let consumer else { return "-" }
                return figure(consumer) ?? "?"
            }
            table.append(
                [
                    process?.name ?? consumer?.process ?? "?",
                    process?.state ?? "?",
                    process.map { $0.restarts.map(String.init) ?? "?" } ?? "?",
                    consumer?.consumer ?? "-",
                    known { consumer in consumer.inPerSecond.map { Self.rate($0) } },
                    known { consumer in consumer.outPerSecond.map { Self.rate($0) } },
                    known { $0.lagEvents.map(String.init) },
                    known { $0.lagSeconds.map { Duration.seconds(saturating: $0).secondsText(decimals: 1) } },
                    known { consumer in
                        consumer.reported ? consumer.progressAgeSeconds.map { Self.seconds($0) + " ago" } : "no report"
                    },
                    Self.cut(process?.lastError ?? "-", to: 48),
                ].map { TerminalText.escaped($0) })  // names and errors are what processes said
        }
        let widths = header.indices.map { column in table.map { $0[column].count }.max() ?? 0 }
        for line in table {
            lines.append(
                zip(line, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(
                    separator: "  "
                ).trimmingCharacters(in: .whitespaces))
        }
        let problems = self.problems
        lines.append("")
        lines.append(
            problems.isEmpty
                ? "healthy: every process up, every consumer within \(Self.seconds(maxLagSeconds))"
                : "trouble: " + problems.map { TerminalText.escaped($0) }.joined(separator: "; "))
        return lines.map { Self.cut($0, to: width) }.joined(separator: "\n")
    }

    static func rate(_ value: Double?) -> String {
        guard let value else { return "-" }
        return value >= 100 ? String(format: "%.0f", value) : String(format: "%.1f", value)
    }

    /// A figure in milliseconds, to the hundredth: "0.42 ms"; "-" if unknown.
    static func milliseconds(_ value: Double?) -> String {
        guard let value else { return "-" }
        return Duration.milliseconds(saturating: value).millisecondsText(decimals: 2) + " ms"
    }

    /// A lag or an age: to the tenth of a second under a minute ("45.0 s"), else "1m5s".
    static func seconds(_ value: Double) -> String {
        let duration = Duration.seconds(saturating: value)
        return duration < .seconds(60) ? duration.secondsText(decimals: 1) + " s" : duration.compactText()
    }

    static func bytes(_ value: UInt64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var amount = Double(value)
        var unit = 0
        while amount >= 1024, unit < units.count - 1 {
            amount /= 1024
            unit += 1
        }
        return unit == 0 ? "\(value) B" : String(format: "%.1f %@", amount, units[unit])
    }

    static func cut(_ text: String, to width: Int) -> String {
        text.count <= width ? text : String(text.prefix(max(0, width - 1))) + "…"
    }
}

extension DeploymentHealth.Process {
    /// A process as the supervisor's `ps` tells it.
    init(_ row: Supervisor.Row, lastError: String?) {
        name = row.name
        pid = row.pid
        state = row.state.rawValue
        up = row.state == .ready
        restarts = row.restarts
        uptimeSeconds = row.uptimeSeconds
        lastExit = row.lastExit
        self.lastError = lastError
    }
}
