import ArgumentParser
import BookingServer
import Foundation
import Guards
import Hummingbird
import Logging
import RatesServer
import ServiceLifecycle

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run an embedded server on loopback: the rates source or the booking service.",
        subcommands: [ServeRates.self, ServeBooking.self]
    )
}

func bootstrapServerLogging(_ level: Logger.Level, label: String) -> Logger {
    TerminalSafeLogHandler.setLevel(level)
    var logger = Logger(label: label)
    logger.logLevel = level
    return logger
}

func runServer(_ application: some ApplicationProtocol, logger: Logger) async throws {
    let group = ServiceGroup(
        configuration: .init(
            services: [.init(service: application)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    try await group.run()
}
