import ArgumentParser
import Bus
import Foundation
import FrontEnd
import TerminalUI

#if canImport(Glibc)
    import Glibc
#endif

/// `bureau tui`: the terminal front-end on a deployment's bus.
struct TuiCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tui",
        abstract: "The terminal front-end: watchlist, converter, reservations, alerts and the bus live.",
        discussion: """
            Every action is a command URL sent through the same router as `bureau send`; press ? for
            the keys. Colours follow NO_COLOR and TERM=dumb. Log lines go to DATA/logs/tui.log so
            that they do not disturb the screen.

            Keys:
            \(KeyBindings.all.map { "  \($0.keys.padding(toLength: 18, withPad: " ", startingAt: 0)) \($0.action)" }.joined(separator: "\n"))
            """
    )

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        guard Terminal.isInteractive else {
            throw CLIError("`bureau tui` needs a terminal on standard input and output")
        }
        let location = global.location
        redirectStandardError(to: location.processLogDirectory + "/tui.log")
        global.bootstrapLogging()
        var options = BusClient.Options(process: "tui")
        options.publishTimeout = .seconds(5)
        let client = try BusClient(location: location, options: options, logger: global.logger("bureau.client"))
        defer { client.close() }
        let session = LiveSession(
            client: client, router: Composition.registry().router,
            colorMode: ColorMode.detect(environment: ProcessInfo.processInfo.environment),
            logger: global.logger("bureau.tui"))
        do {
            try await session.run()
        } catch {
            throw CLIError(error.description)
        }
    }

    /// Log lines and crash reports go to a file rather than over the screen.
    private func redirectStandardError(to path: String) {
        let directory = (path as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        dup2(fd, STDERR_FILENO)
        close(fd)
    }
}
