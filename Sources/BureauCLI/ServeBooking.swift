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
            POST /resolve (header Idempotency-Key: what the call with that key did; when nothing
            was done the key is closed, and a call with it arriving later is refused),
            GET /reservations/{id}, GET /reservations. Bookings are kept in memory.

            Faults, each for a share of the calls that carry an Idempotency-Key (create, cancel,
            resolve), drawn from --seed, the key and how many calls came with it before:
            --stall-rate holds a call for --stall (half before the work, half after),
            --oversize-rate does it and answers 2 MiB (over the booking adapter's 1 MiB limit),
            --cut-rate closes the connection without an answer once the request is read (half
            before the work, half after). With --failure-rate they add up to at most 1.
            """)
    )

    @OptionGroup var readiness: ReadinessOptions
    @Option(help: "Log level.") var logLevel: Logger.Level = .info
    @Option(
        help: "The port on 127.0.0.1, 0 to 65535; 0 picks a free one. (default: 8562)",
        transform: BoundedNumber.integers(in: 0...65535))
    var port = 8562
    @Option(
        help: "Milliseconds a create, cancel or resolve answer is held back after the work, 0 to 600000. (default: 0)",
        transform: BoundedNumber.integers(in: 0...600_000))
    var latency = 0
    @Option(
        help: "The share of requests answered 503, from 0 to 1. (default: 0)",
        transform: BoundedNumber.decimals(in: 0...1))
    var failureRate = 0.0
    @Option(
        help: "The share of calls held back for --stall, from 0 to 1. (default: 0)",
        transform: BoundedNumber.decimals(in: 0...1))
    var stallRate = 0.0
    @Option(
        help: "Milliseconds a stalled call is held, 1 to 600000. (default: 10000)",
        transform: BoundedNumber.integers(in: 1...600_000))
    var stall = 10_000
    @Option(
        help: "The share of calls answered with a body over the adapter's size limit, from 0 to 1. (default: 0)",
        transform: BoundedNumber.decimals(in: 0...1))
    var oversizeRate = 0.0
    @Option(
        help: "The share of calls whose connection is cut without an answer, from 0 to 1. (default: 0)",
        transform: BoundedNumber.decimals(in: 0...1))
    var cutRate = 0.0
    @Option(
        help: "The seed the faults are drawn from, 0 to 18446744073709551615. (default: a random one)",
        transform: BoundedNumber.integers(in: UInt64.min...UInt64.max))
    var seed: UInt64?

    func validate() throws {
        if let problem = serverConfiguration.problem { throw ValidationError(problem) }
    }

    /// The server's configuration from the options.
    var serverConfiguration: BookingServer.Configuration {
        var configuration = BookingServer.Configuration()
        configuration.port = port
        configuration.latency = .milliseconds(latency)
        configuration.failureRate = failureRate
        configuration.stallRate = stallRate
        configuration.stall = .milliseconds(stall)
        configuration.oversizeRate = oversizeRate
        configuration.cutRate = cutRate
        configuration.seed = seed
        return configuration
    }

    func run() async throws {
        let logger = bootstrapServerLogging(logLevel, label: "bureau.serve.booking")
        let readiness = self.readiness
        let application = BookingServer(configuration: serverConfiguration).application(logger: logger) { port in
            logger.info("serving bookings", metadata: ["cli.url": "http://127.0.0.1:\(port)"])
            readiness.notify(detail: "http://127.0.0.1:\(port)")
        }
        try await runServer(application, logger: logger)
    }
}
