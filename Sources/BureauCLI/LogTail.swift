import ArgumentParser
import BureauSchemas
import Bus
import EventLog
import Foundation
import LogTools

struct LogTail: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tail",
        abstract: "Follow events as the bus commits them (Ctrl-C to stop).",
        discussion: "Starts at the head of the log, or after --after; needs a running bus."
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var connection: BusConnectionOptions
    @Option(help: ArgumentHelp("Only types starting with this, e.g. bureau.watchlist.", valueName: "prefix"))
    var type: [String] = []
    @Option(help: "Start after this position instead of at the head.") var after: UInt64?
    @Flag(help: "One JSON object per line.") var json = false
    @Flag(help: "Events as stored, not as this build reads them (through its upcasters).") var raw = false

    func run() async throws {
        let client = try connection.client(
            process: "log-tail", global: global, upcasting: raw ? .none : try Composition.upcasting())
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
