import ArgumentParser
import Bus
import EventLog
import Foundation
import FrontEnd
import Guards
import LogTools
import Runtime
import TerminalUI
import ZeroMQBus

#if canImport(Glibc)
    import Glibc
#endif

/// `bureau tui`: the terminal front-end on a deployment's bus.
struct TuiCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tui",
        abstract: "The terminal front-end: watchlist, converter, reservations, alerts and the bus live.",
        discussion: HelpText.prose(
            """
            Every action is a command URL sent through the same router as `bureau send`; press ? for
            the keys. Colours follow NO_COLOR and TERM=dumb. Log lines go to DATA/logs/tui.log so
            that they do not disturb the screen.

            Keys:
            \(KeyBindings.plainText.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
            """)
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var metrics: MetricsOptions
    @OptionGroup var connection: BusConnectionOptions
    @OptionGroup var store: StoreOptions
    @Flag(
        help: """
            Time travel: open the log instead of the live bus; step through it event by event, \
            jump to a position or a time, and see each event and the state difference it caused.
            """)
    var replay = false
    @OptionGroup var traces: TraceOptions

    func run() async throws {
        guard Terminal.isInteractive else {
            throw CLIError("`bureau tui` needs a terminal on standard input and output")
        }
        let location = global.location
        if replay {
            try await runReplay(try LogSource.resolve(global, connection, store, process: "tui-replay"))
            return
        }
        let unredirected = redirectStandardError(to: location.processLogDirectory + "/tui.log")
        global.bootstrapLogging()
        let logger = global.logger("bureau.tui")
        if let unredirected {
            // Said where the log lines go instead: on the terminal, over the screen.
            logger.error(
                "cannot keep the front-end's log in its file; its lines go to the terminal",
                metadata: ["tui.log": "\(location.processLogDirectory)/tui.log", "tui.error": "\(unredirected)"])
        }
        let endpoint = metrics.endpoint(process: "tui", location: location, logger: logger)
        let client = try connection.client(
            process: "tui", publishTimeout: .seconds(5), global: global, upcasting: try Composition.upcasting())
        defer { client.close() }
        // The front-end is a consumer like any other: the bus sees its lag.
        let progress = ProgressReporter(client: client, logger: logger)
        let session = LiveSession(
            client: client, router: Composition.registry().router,
            colorMode: ColorMode.detect(environment: ProcessInfo.processInfo.environment),
            logger: logger, metrics: progress.consumer("tui"))
        // Both say their own failures in the log; what they throw is only their cancellation.
        let background = [
            Task { try? await progress.run() },
            Task { try? await endpoint?.run() },
        ]
        defer { for task in background { task.cancel() } }
        do {
            try await traces.exporting(process: "tui", global: global) { try await session.run() }
        } catch let error as TerminalError {
            throw CLIError(error.description)
        }
    }

    /// Loads the log (it must fit in memory) and opens the time-travel screen at its end.
    private func runReplay(_ source: LogSource) async throws {
        defer { source.close() }
        var events: [StoredEvent] = []
        let progress = Progress(label: "reading the log")
        try await source.forEach { event in
            events.append(event)
            progress.update(event.position)
        }
        progress.finish()
        guard !events.isEmpty else { throw CLIError("the log in \(source.name) is empty: nothing to replay") }
        var browser = ReplayBrowser(events: events, coordinator: Coordinator(router: Composition.registry().router)) {
            LogReplay(registry: Composition.registry())
        }
        browser.move(to: events.count)
        let session = ReplaySession(
            browser: browser, colorMode: ColorMode.detect(environment: ProcessInfo.processInfo.environment))
        do {
            try await session.run()
        } catch {
            throw CLIError(error.description)
        }
    }

    /// Log lines and crash reports go to a file rather than over the screen; the file and its
    /// directory are owner-only, as the supervisor's process logs are. Returns why not, when
    /// the file cannot be opened: standard error is then left as it is.
    private func redirectStandardError(to path: String) -> (any Error)? {
        let directory = (path as NSString).deletingLastPathComponent
        do {
            try OwnerOnly.makeDirectory(directory)
            let fd = try OwnerOnly.openForWriting(path)
            dup2(fd, STDERR_FILENO)
            close(fd)
            return nil
        } catch {
            return error
        }
    }
}
