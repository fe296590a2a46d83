import ArgumentParser
import Bus
import EventLog
import Foundation
import Guards
import Logging
import ServiceLifecycle
import Supervisor
import YAMLFile

struct DownCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "down", abstract: "Stop a running deployment (`bureau up`), every process in reverse order.")

    @OptionGroup var global: GlobalOptions

    func run() throws {
        do {
            _ = try ControlClient.ask("down", location: global.location)
        } catch {
            throw usageError(error.description, code: 1)
        }
        print("stopping the deployment on \(global.location.dataDirectory)")
    }
}
