import ArgumentParser
import Bus
import EventLog
import Foundation
import Guards
import Logging
import ServiceLifecycle
import Supervisor
import YAMLFile

struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Write the default deployment out as bureau.yaml, to edit and run with `bureau up --file`."
    )

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write it.", valueName: "path")) var file = "bureau.yaml"
    @Flag(help: "Overwrite an existing file.") var force = false

    func run() throws {
        guard force || !FileManager.default.fileExists(atPath: file) else {
            throw usageError("\(file) already exists; --force overwrites it")
        }
        do {
            try Deployment.defaultFile.write(toFile: file, atomically: true, encoding: .utf8)
        } catch {
            throw usageError("cannot write \(file): \(error.localizedDescription)", code: 1)
        }
        print("wrote \(file); run it with: bureau up --file \(file)")
    }
}
