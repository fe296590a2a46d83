import ArgumentParser
import BookingServer
import Foundation
import Guards
import Hummingbird
import Logging
import RatesServer
import ServiceLifecycle

struct ServeBooking: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "booking",
        abstract: "Serve the booking API: idempotent by key, with latency and failures on request.",
        discussion: HelpText.prose(
            """
            POST /reservations (header Idempotency-Key), POST /reservations/{id}/cancel,
            GET /reservations/{id}, GET /reservations. Bookings are kept in memory.
            """)
    )

    @OptionGroup var readiness: ReadinessOptions
    @Option(help: "Log level.") var logLevel: Logger.Level = .info
    @Option(
        help: "The port on 127.0.0.1; 0 picks a free one. (default: 8562)",
        transform: BoundedNumber.integers(in: 0...65535))
    var port = 8562
    @Option(
        help: "Milliseconds a create or cancel answer is held back after the work is done, 0 to 600000. (default: 0)",
        transform: BoundedNumber.integers(in: 0...600_000))
    var latency = 0
    @Option(
        help: "The share of requests answered 503, from 0 to 1. (default: 0)",
        transform: BoundedNumber.decimals(in: 0...1))
    var failureRate = 0.0

    func run() async throws {
        let logger = bootstrapServerLogging(logLevel, label: "bureau.serve.booking")
        var configuration = BookingServer.Configuration()
        configuration.port = port
        configuration.latency = .milliseconds(latency)
        configuration.failureRate = failureRate
        let readiness = self.readiness
        let application = BookingServer(configuration: configuration).application(logger: logger) { port in
            logger.info("serving bookings", metadata: ["cli.url": "http://127.0.0.1:\(port)"])
            readiness.notify(detail: "http://127.0.0.1:\(port)")
        }
        try await runServer(application, logger: logger)
    }
}
