import ArgumentParser
import BureauSchemas
import Bus
import EventLog
import Foundation
import Guards
import LogTools

struct LogShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print events from the log, one per line.",
        discussion: HelpText.prose(
            """
            Lines read: position, commit time, type, payload. With --json each line is a JSON
            object: position, id, type, time, producer, causation, correlation, and the payload
            in protobuf's JSON mapping (an unknown type has "unknown": true, a payload that does not
            decode "undecodable": why, and both "payloadBase64").

            Events are shown as this build reads them: an event of an older shape is read \
            through its feature's upcasters and says so ("(upcast from TYPE)"; in JSON \
            "upcastFrom"). --raw shows every event as stored.

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
    @OptionGroup var connection: BusConnectionOptions
    @OptionGroup var store: StoreOptions
    @Option(help: "The first position to show.") var from: UInt64 = 1
    @Option(help: "The last position to show.") var to: UInt64?
    @Option(help: ArgumentHelp("Only types starting with this, e.g. bureau.watchlist.", valueName: "prefix"))
    var type: [String] = []
    @Option(help: ArgumentHelp("Only the chain of events this intent (an event id) caused.", valueName: "id"))
    var correlation: String?
    @Flag(help: "One JSON object per line.") var json = false
    @Flag(help: "Events as stored, not as this build reads them (through its upcasters).") var raw = false

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
        let source = try LogSource.resolve(global, connection, store, process: "log-show", raw: raw)
        defer { source.close() }
        try await source.forEach(from: from, to: to) { event in
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
