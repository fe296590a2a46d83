import ArgumentParser
import Bus
import Foundation
import Logging
import ZeroMQBus

/// Options every command that touches a deployment takes.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The deployment's data directory (default: $BUREAU_DATA, else .bureau).", valueName: "dir"))
    var data: String?

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    var location: BusLocation { BusLocation.resolve(data: data) }

    /// Makes the chosen level that of every logger made from now on (each goes to stderr through
    /// ``TerminalSafeLogHandler``, which ``Bureau/main()`` installed).
    func bootstrapLogging() {
        TerminalSafeLogHandler.setLevel(logLevel)
    }

    func logger(_ label: String) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = logLevel
        return logger
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
