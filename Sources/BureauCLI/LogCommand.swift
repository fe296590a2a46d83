import ArgumentParser
import BureauSchemas
import Bus
import EventLog
import Foundation
import LogTools

struct LogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Inspect the event log.",
        discussion: HelpText.prose(
            """
            show, stats, verify and export read the segment files directly: they work with or
            without a running bus, and see only records whose checksum holds. A damaged record
            stops them with an error naming its segment, byte offset and position (exit 1).
            tail follows the live bus. import builds a new log from an export. repair moves
            damage aside so that the bus can start again.
            """),
        subcommands: [
            LogShow.self, LogTail.self, LogStats.self, LogVerify.self, LogRepairCommand.self, LogExport.self,
            LogImport.self,
        ]
    )
}

struct LogShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print events from the log, one per line.",
        discussion: HelpText.prose(
            """
            Lines read: position, commit time, type, payload. With --json each line is a JSON
            object: position, id, type, time, producer, causation, correlation, and the payload
            in protobuf's JSON mapping (an unknown type has "unknown": true and "payloadBase64").

            --correlation ID shows the whole chain one intent caused: the request whose id that \
            is, every event correlated with it, and every event caused by one of those; in text \
            each event is indented under the event that caused it.

            Examples:
              bureau log show --from 1200 --to 1210
              bureau log show --type bureau.reservations. --json
              bureau log show --correlation 5f0c2a4e-8d1b-4c7e-9a3f-2b6d8e1f0a47
            """)
    )

    @OptionGroup var global: GlobalOptions
    @Option(help: "The first position to show.") var from: UInt64 = 1
    @Option(help: "The last position to show.") var to: UInt64?
    @Option(help: ArgumentHelp("Only types starting with this, e.g. bureau.watchlist.", valueName: "prefix"))
    var type: [String] = []
    @Option(help: ArgumentHelp("Only the chain of events this intent (an event id) caused.", valueName: "id"))
    var correlation: String?
    @Flag(help: "One JSON object per line.") var json = false

    func validate() throws {
        guard from >= 1 else { throw ValidationError("--from starts at 1") }
        if let to, to < from { throw ValidationError("--to (\(to)) is before --from (\(from))") }
        if let correlation, EventID(correlation) == nil {
            throw ValidationError("--correlation '\(correlation)' is not an event id (8-4-4-4-12 hex digits)")
        }
    }

    func run() async throws {
        let filter = EventFilter(prefixes: type)
        var chain = correlation.flatMap(EventID.init).map(CorrelationChain.init)
        try LogFiles.forEach(in: global.location, from: from, to: to) { event in
            var depth = 0
            if chain != nil {
                guard let found = chain?.depth(of: event) else { return }
                depth = found
            }
            guard filter.matches(event.type) else { return }
            print(json ? event.jsonLine : String(repeating: "  ", count: depth) + event.line)
        }
    }
}

struct LogTail: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tail",
        abstract: "Follow events as the bus commits them (Ctrl-C to stop).",
        discussion: "Starts at the head of the log, or after --after; needs a running bus."
    )

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("Only types starting with this, e.g. bureau.watchlist.", valueName: "prefix"))
    var type: [String] = []
    @Option(help: "Start after this position instead of at the head.") var after: UInt64?
    @Flag(help: "One JSON object per line.") var json = false

    func run() async throws {
        let client = try global.client(process: "log-tail")
        let start: UInt64
        if let after {
            start = after
        } else {
            start = try await client.ping(timeout: .seconds(5)).head
        }
        for try await item in client.subscribe(EventFilter(prefixes: type), after: start) {
            switch item {
            case .event(let event):
                print(json ? event.jsonLine : event.line)
                fflush(nil)
            case .connection(let connected):
                FileHandle.standardError.write(Data((connected ? "bus: connected\n" : "bus: not heard from\n").utf8))
            case .caughtUp:
                break
            }
        }
    }
}

struct LogStats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Count the log's events: in all, per type, first and last position and time, bytes."
    )

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print the statistics as JSON.") var json = false

    func run() async throws {
        var count: UInt64 = 0
        var first: StoredEvent?
        var last: StoredEvent?
        var perType: [String: UInt64] = [:]
        let progress = Progress(label: "reading the log")
        try LogFiles.forEach(in: global.location) { event in
            count += 1
            if first == nil { first = event }
            last = event
            perType[event.type, default: 0] += 1
            progress.update(event.position)
        }
        progress.finish()
        let bytes = LogFiles.bytes(in: global.location)
        if json {
            let types = perType.sorted { $0.key < $1.key }.map { "\(JSONText.quoted($0.key)):\($0.value)" }
            print(
                "{\"count\":\(count),\"first\":\(first?.position ?? 0),\"last\":\(last?.position ?? 0),"
                    + "\"firstTime\":\(first.map { "\"\($0.commitTime)\"" } ?? "null"),"
                    + "\"lastTime\":\(last.map { "\"\($0.commitTime)\"" } ?? "null"),"
                    + "\"bytes\":\(bytes),\"types\":{\(types.joined(separator: ","))}}")
            return
        }
        print("events     \(count)")
        if let first, let last {
            print("first      \(first.position)  \(first.commitTime)")
            print("last       \(last.position)  \(last.commitTime)")
        }
        print("bytes      \(bytes)")
        guard !perType.isEmpty else { return }
        print("per type")
        let width = perType.keys.map(\.count).max() ?? 0
        for (type, number) in perType.sorted(by: { ($0.value, $1.key) > ($1.value, $0.key) }) {
            print("  " + type.padding(toLength: width, withPad: " ", startingAt: 0) + "  \(number)")
        }
    }
}

struct LogVerify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every byte of the log: headers, records, checksums, positions, indexes.",
        discussion: HelpText.prose(
            """
            Reads every segment whole and lists every bad range it finds (not only the first):             its positions, segment and byte offsets, and what is wrong. Also checks that the             segments continue one another, that the recovery point (the last acknowledged             position) is in the log, and that each sparse index matches its segment (an index             is a hint: a mismatch is noted, not an error). Works beside a running bus.

            Exit status: 0 when the log is whole, 1 when anything is damaged.             `bureau log repair` moves damage aside.
            """)
    )

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let directory = global.location.logDirectory
        guard FileManager.default.fileExists(atPath: directory) else {
            throw CLIError("there is no log in \(directory)")
        }
        let progress = Progress(label: "verifying")
        let report = try LogVerifier.verify(directory: directory) { progress.update($0) }
        progress.finish()
        for note in report.notes { print("note: \(note)") }
        if !report.ok {
            for problem in report.problems { print("bad: \(problem)") }
            print(
                "\(report.problems.count) bad range(s) in \(report.segments) segment(s); "
                    + "`bureau log repair --data \(global.location.dataDirectory)` moves them aside")
            throw ExitCode.failure
        }
        var line = "ok: \(report.records) records in \(report.segments) segment(s), \(report.bytes) bytes"
        if report.records > 0 { line += "; positions 1…\(report.head)" }
        if report.writeInProgress { line += " (the bus is writing the next record)" }
        print(line)
    }
}

struct LogRepairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repair",
        abstract: "Move damaged parts of the log aside, so that the bus can start again.",
        discussion: HelpText.prose(
            """
            When the bus refuses to start because the log is damaged (a bad record it had             acknowledged, a bad segment header, a missing segment), this makes the log whole             again without deleting anything: each damaged segment is rewritten with its valid             records as they were, and each position the damage held becomes a             bureau.system.RecordLost event (so positions stay contiguous and none is reused);             the original segment goes to log/damaged-<time>/ with a README saying what was             wrong. A torn write at the end that was never acknowledged is cut. Indexes that do             not match their segments are rebuilt.

            Stop the bus first: repair takes the log's lock. --dry-run says what it would do.
            Replay's verification reports the lost positions, since reducers' outputs there             are gone: see what they were in the damaged segment, if anything of it is readable.
            """)
    )

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Say what would change, and change nothing.") var dryRun = false

    func run() async throws {
        let directory = global.location.logDirectory
        guard FileManager.default.fileExists(atPath: directory) else {
            throw CLIError("there is no log in \(directory)")
        }
        let report = try LogRepair.repair(directory: directory, dryRun: dryRun, placeholder: LogRepair.recordLost)
        for problem in report.before.problems { print("found: \(problem)") }
        print(report)
    }
}
