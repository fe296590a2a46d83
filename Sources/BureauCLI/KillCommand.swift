import ArgumentParser
import Guards
import Supervisor

struct KillCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kill",
        abstract: "Send a signal to one process of a running deployment (`bureau up`), by its name.",
        discussion: HelpText.prose(
            """
            The supervisor sends it to the process's child that runs now, so it reaches that
            child and no other process, whatever `bureau ps` said a moment before. What follows
            is the restart policy's, as for any other end: a process killed by a signal is
            restarted; one that stops cleanly on TERM (exit code 0) is not.
            """))

    @Argument(help: "The process, as `bureau ps` names it.")
    var process: String

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp(
            "TERM, KILL, INT, HUP, STOP, CONT… (with or without SIG), or a number from 1 to 31.",
            valueName: "signal"))
    var signal = "TERM"

    @OptionGroup var global: GlobalOptions

    func run() throws {
        guard let number = ExitStatus.signal(named: signal) else {
            throw usageError(
                "--signal \(signal) is not a signal: give a name (TERM, KILL, INT, HUP, STOP, CONT…) or a number from 1 to 31"
            )
        }
        let pid: Int32
        do {
            pid = try ControlClient.kill(process, signal: number, location: global.location)
        } catch {
            throw usageError(error.description, code: 1)
        }
        print("sent \(ExitStatus.name(ofSignal: number)) to \(process) (pid \(pid))")
    }
}
