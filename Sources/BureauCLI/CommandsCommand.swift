import ArgumentParser
import Bus
import EventLog
import Foundation
import Guards
import LogTools
import Runtime

struct CommandsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "commands", abstract: "List every module's command URLs and their parameters.")

    @Flag(help: "Print them as JSON.") var json = false

    func run() throws {
        let router = Composition.registry().router
        if json {
            let list = router.commands.map { command in
                [
                    "url": command.usage, "module": command.module, "command": command.name,
                    "summary": command.summary,
                    "parameters": command.parameters.map {
                        [
                            "name": $0.name, "kind": $0.kind.placeholder, "required": $0.isRequired ? "yes" : "no",
                            "help": $0.help,
                        ]
                    },
                ] as [String: any Sendable]
            }
            let data = try JSONSerialization.data(withJSONObject: list, options: [.prettyPrinted, .sortedKeys])
            print(String(decoding: data, as: UTF8.self))
            return
        }
        for module in router.modules {
            print(module)
            for command in router.commands(of: module) {
                print("  \(command.usage)")
                print("      \(command.summary)")
                for parameter in command.parameters {
                    print(
                        "      \(parameter.name) (\(parameter.kind.placeholder)\(parameter.isRequired ? "" : ", optional")): \(parameter.help)"
                    )
                }
            }
        }
    }
}
