import ArgumentParser
import Bus
import EventLog
import Foundation
import Guards
import LogTools
import Runtime

struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Rebuild reducer states and read models at a position, or verify the reducers against the log.",
        discussion: HelpText.prose(
            """
            Reads the log files alone: no bus and no other process is needed, and a running \
            deployment is not disturbed.

            Without --verify it folds the log from position 1 to --to (or to the last event \
            committed at or before --to-time, or to the end) through every module's reducer \
            and every read model, and prints each state: the reducer's state as its snapshot \
            holds it, and the read model as `bureau show` prints it (--json: one document). \
            An event a read model cannot read is passed over and named on stderr.

            With --verify it re-runs every reducer (or --module's) over its recorded inputs and \
            compares what it computes with the outputs in the log: type, payload, id, causation \
            and correlation. At the first divergence it prints the position, the module, the \
            recorded and the re-computed event as JSON and the fields that differ, and exits 1. \
            When everything matches it prints, per module, the inputs re-applied and the outputs \
            compared (and the first malformed input, such as one whose upcaster failed), and \
            exits 0. Outputs of the very last inputs that a stopped or lagging host has not \
            published yet are counted as unpublished, not as divergences. A recorded output \
            whose upcaster fails is a divergence of its own (unreadable).

            Examples:
              bureau replay --to 1200                 every state after the event at 1200
              bureau replay --module watchlist --json
              bureau replay --to-time 2026-11-22T02:20:00Z
              bureau replay --verify                  check today's reducers against history
              bureau replay --verify --module reservations --data /srv/bureau
            """)
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var connection: BusConnectionOptions
    @OptionGroup var store: StoreOptions
    @Option(help: "Replay up to and including this position (default: the whole log).") var to: UInt64?
    @Option(
        name: .customLong("to-time"),
        help: ArgumentHelp(
            "Replay the events committed at or before this time (RFC 3339, e.g. 2026-11-22T02:20:00Z).",
            valueName: "time"))
    var toTime: String?
    @Option(help: ArgumentHelp("Only this module's reducer and read models.", valueName: "module"))
    var module: String?
    @Flag(help: "Print JSON instead of text.") var json = false
    @Flag(help: "Re-run the reducers and compare their outputs with the recorded ones.") var verify = false

    func validate() throws {
        if to != nil, toTime != nil { throw ValidationError("give --to or --to-time, not both") }
        if let toTime, CommitTime(toTime) == nil {
            throw ValidationError("--to-time '\(toTime)' is not an RFC 3339 time such as 2026-11-22T02:20:00Z")
        }
        if let module {
            let registry = Composition.registry()
            guard let found = registry.module(named: module) else {
                let names = registry.modules.map(\.name).joined(separator: ", ")
                throw ValidationError("unknown module '\(module)'; there are: \(names)")
            }
            if verify, found.reducer == nil {
                let names = registry.modules.filter { $0.reducer != nil }.map(\.name).joined(separator: ", ")
                throw ValidationError("module '\(module)' has no reducer to verify; these do: \(names)")
            }
        }
    }

    func run() async throws {
        let registry = Composition.registry()
        let source = try LogSource.resolve(global, connection, store, process: "replay")
        defer { source.close() }
        if verify {
            try await runVerification(registry, source)
        } else {
            try await runReplay(registry, source)
        }
    }

    private func runReplay(_ registry: ModuleRegistry, _ source: LogSource) async throws {
        let replay = LogReplay(registry: registry, module: module)
        let progress = Progress(label: "replaying")
        try await ReplayReading.forEach(in: source, to: to, until: toTime.flatMap(CommitTime.init)) { event in
            replay.apply(event)
            progress.update(event.position)
        }
        progress.finish()
        let snapshot = try replay.snapshot()
        // On stderr, so that the states printed stay what they are; not a failure: every event
        // was read, and the ones a read model could not read are named.
        for (name, passedOver) in replay.passedOver where !passedOver.isEmpty {
            printWarning("read model \(name): \(passedOver)")
        }
        if json {
            print(snapshot.json.pretty)
            return
        }
        var lines = [
            snapshot.position == 0
                ? "nothing replayed: no event is in range"
                : "replayed \(replay.eventCount) events, up to position \(snapshot.position)"
                    + (snapshot.time.map { " (\($0))" } ?? "")
        ]
        for state in snapshot.modules {
            lines.append("")
            lines.append(
                "== \(state.module): reducer state (\(state.inputs) inputs"
                    + (state.lastInput > 0 ? ", the last at \(state.lastInput)" : "")
                    + (state.malformedInputs > 0 ? ", \(state.malformedInputs) malformed" : "") + ") ==")
            lines.append(state.state.pretty)
        }
        for projection in snapshot.projections {
            lines.append("")
            lines.append("== read model \(projection.name) ==")
            lines.append(projection.text)
        }
        print(lines.joined(separator: "\n"))
    }

    private func runVerification(_ registry: ModuleRegistry, _ source: LogSource) async throws {
        let reducers = registry.modules.filter { module == nil || $0.name == module }.compactMap(\.reducer)
        let verifier = ReplayVerifier(reducers: reducers)
        let progress = Progress(label: "verifying")
        var divergence: ReplayDivergence?
        var events = 0
        try await ReplayReading.scan(in: source, to: to, until: toTime.flatMap(CommitTime.init)) { event in
            events += 1
            progress.update(event.position)
            divergence = verifier.check(event)
            return divergence == nil
        }
        progress.finish()
        let counts = verifier.counts
        if json {
            var document: [(String, JSONValue)] = [
                ("ok", .bool(divergence == nil)), ("events", .integer(events)),
                (
                    "modules",
                    .array(
                        counts.map { count in
                            .object(
                                [
                                    ("module", .string(count.module)), ("inputs", .integer(count.inputs)),
                                    ("outputsCompared", .integer(count.outputsCompared)),
                                    ("malformedInputs", .integer(count.malformedInputs)),
                                    ("unpublished", .integer(count.unpublished)),
                                ] + (count.firstMalformed.map { [("firstMalformed", JSONValue.string($0))] } ?? []))
                        })
                ),
            ]
            if let divergence { document.append(("divergence", divergence.json)) }
            print(JSONValue.object(document).pretty)
        } else if let divergence {
            print(divergence.description)
        } else {
            print("ok: \(events) events read; every recorded output matches what the reducers compute")
            let width = max(6, counts.map(\.module.count).max() ?? 0)
            print("module".padding(toLength: width, withPad: " ", startingAt: 0) + "  inputs  outputs compared")
            for count in counts {
                var line =
                    count.module.padding(toLength: width, withPad: " ", startingAt: 0)
                    + "  \(String(count.inputs).leftPadded(6))  \(String(count.outputsCompared).leftPadded(16))"
                if count.malformedInputs > 0 {
                    line +=
                        "  (\(count.malformedInputs) malformed inputs, answered by an ErrorRaised; the first at "
                        + "\(count.firstMalformed ?? "?"))"
                }
                if count.unpublished > 0 {
                    line += "  (\(count.unpublished) outputs of the last inputs not in the log yet)"
                }
                print(line)
            }
        }
        if divergence != nil { throw ExitCode.failure }
    }
}

extension String {
    /// Right-aligned in `width` columns.
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
