import ArgumentParser
import Bus
import EventLog
import Foundation
import Guards
import Logging
import ServiceLifecycle
import Supervisor
import YAMLFile

struct PsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ps", abstract: "List the processes of a running deployment (`bureau up`).")

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print them as JSON.") var json = false

    func run() throws {
        let rows: [Supervisor.Row]
        do {
            rows = try ControlClient.processes(location: global.location)
        } catch {
            throw usageError(error.description, code: 1)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(rows), as: UTF8.self))
            return
        }
        let width = max(7, rows.map(\.name.count).max() ?? 0)
        print(
            "PROCESS".padding(toLength: width, withPad: " ", startingAt: 0)
                + "  PID      STATE          RESTARTS  UPTIME    LAST EXIT")
        for row in rows {
            let uptime = row.uptimeSeconds.map { Duration.seconds(saturating: $0).compactText() } ?? "-"
            print(
                row.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                    + "\(row.pid)".padding(toLength: 7, withPad: " ", startingAt: 0) + "  "
                    + row.state.rawValue.padding(toLength: 13, withPad: " ", startingAt: 0) + "  "
                    + "\(row.restarts)".padding(toLength: 8, withPad: " ", startingAt: 0) + "  "
                    + uptime.padding(toLength: 8, withPad: " ", startingAt: 0) + "  " + (row.lastExit ?? "-"))
        }
    }
}
