import ArgumentParser
import Foundation
import Guards
import Supervisor

/// The `bureau` command: one binary, a subcommand per process and tool.
public struct Bureau: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "bureau",
        abstract: "A bureau de change that runs as cooperating processes on an event bus.",
        discussion: HelpText.prose(
            """
            Every process finds the bus through the data directory: --data DIR, else the
            BUREAU_DATA environment variable, else .bureau in the working directory.
            """),
        version: "0.1.0",
        subcommands: [
            UpCommand.self,
            InitCommand.self,
            PsCommand.self,
            StatusCommand.self,
            TopCommand.self,
            DownCommand.self,
            KillCommand.self,
            LogsCommand.self,
            BusCommand.self,
            RunCommand.self,
            ServeCommand.self,
            SendCommand.self,
            CommandsCommand.self,
            ShowCommand.self,
            ReplayCommand.self,
            PublishCommand.self,
            LogCommand.self,
            TraceCommand.self,
            KeygenCommand.self,
            TuiCommand.self,
            TestCommand.self,
        ]
    )

    public init() {}

    /// Parses and runs the command; a process started by `bureau up` first ties its life to the
    /// supervisor's (see ``Lifeline``).
    public static func main() async {
        Lifeline.watchIfInherited()
        TerminalSafeLogHandler.bootstrap()
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            // As ArgumentParser's exit(withError:), with what peers and files said escaped: an
            // error names what was wrong, and that may be a peer's or a file's bytes.
            let code = exitCode(for: error)
            let message = TerminalText.escaped(fullMessage(for: error), keepingLineBreaks: true)
            if !message.isEmpty {
                let stream = code == .success ? FileHandle.standardOutput : FileHandle.standardError
                stream.write(Data((message + "\n").utf8))
            }
            Foundation.exit(code.rawValue)
        }
    }
}
