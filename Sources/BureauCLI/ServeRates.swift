import ArgumentParser
import BookingServer
import Foundation
import Guards
import Hummingbird
import Logging
import RatesServer
import ServiceLifecycle

struct ServeRates: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rates",
        abstract: "Serve ECB reference rates from the shipped history, advancing at a pace.",
        discussion: HelpText.prose(
            """
            Paths, as the ECB's: \(RatesServer.dailyPath) (the fixing of "today") and
            \(RatesServer.ninetyDayPath) (90 days, newest first). "Today" starts at --start
            and moves --pace days per second, wrapping round at the end of the history.
            History: European Central Bank euro reference rates, 1999-01-04 to 2026-10-30.
            """)
    )

    @OptionGroup var readiness: ReadinessOptions
    @Option(help: "Log level.") var logLevel: Logger.Level = .info
    @Option(
        help: "The port on 127.0.0.1, 0 to 65535; 0 picks a free one. (default: 8561)",
        transform: BoundedNumber.integers(in: 0...65535))
    var port = 8561
    @Option(
        help: "Days of history per second of wall time, 0 to 10000. (default: 0.2)",
        transform: BoundedNumber.decimals(in: 0...10_000))
    var pace = 0.2
    @Option(
        help: ArgumentHelp("The first day served, YYYY-MM-DD (default: a year before the last).", valueName: "date"))
    var start: String?
    @Option(
        help: ArgumentHelp(
            "An ECB CSV history to serve instead of the shipped one (gzipped or not).", valueName: "path"))
    var csv: String?
    @Option(
        help: """
            Answer 500 to the first N requests (0 to 1000000), as a source that is down at first would: to watch \
            the rates adapter retry (a simulated fault, like serve booking's). (default: 0)
            """,
        transform: BoundedNumber.integers(in: 0...1_000_000))
    var failFirst = 0

    func run() async throws {
        let logger = bootstrapServerLogging(logLevel, label: "bureau.serve.rates")
        let history: ECBHistory
        do {
            history =
                try csv.map { path throws(ECBHistory.LoadError) in try ECBHistory(path: path) } ?? ECBHistory.bundled()
        } catch {
            throw usageError("\(error)", code: 1)
        }
        var configuration = RatesServer.Configuration()
        configuration.port = port
        configuration.daysPerSecond = pace
        configuration.start = start
        configuration.failFirst = failFirst
        let server: RatesServer
        do {
            server = try RatesServer(configuration: configuration, history: history)
        } catch {
            throw usageError("\(error)")
        }
        let readiness = self.readiness
        let application = server.application(logger: logger) { port in
            logger.info("serving rates", metadata: ["cli.url": "http://127.0.0.1:\(port)\(RatesServer.dailyPath)"])
            readiness.notify(detail: "http://127.0.0.1:\(port)")
        }
        try await runServer(application, logger: logger)
    }
}
