import Foundation
import Runtime

/// The booking adapter as a module `bureau run` can host.
///
/// Settings: `booking-url` (default the embedded server), `timeout-ms` (1 to 600000),
/// `max-attempts` (1 to 1000), `backoff-initial-ms` (1 to 3600000), `backoff-max-ms`
/// (1 to 86400000).
public enum BookingAdapterModule {
    public static let defaultURL = "http://127.0.0.1:8562"

    public static func make() -> FeatureModule {
        FeatureModule(
            name: "booking-adapter", summary: "books accepted reservations with the booking service",
            consumes: BookingAdapterService.inputTypes, reportsProgress: true
        ) {
            environment in
            let settings = AdapterSettings(environment.settings)
            var (url, timeout, configuration) = try Self.configuration(settings)
            let statistics = environment.statistics
            configuration.onReady = { statistics?.caughtUp(head: 0) }
            return BookingAdapterService(
                service: HTTPBookingService(baseURL: url, timeout: timeout), client: environment.client,
                snapshots: environment.snapshots, configuration: configuration, logger: environment.logger,
                consumer: environment.consumerMetrics("booking-adapter"))
        }
    }

    /// The service URL, the call timeout and the adapter's configuration from `settings`;
    /// throws for a setting it cannot use, naming it.
    public static func configuration(
        _ settings: AdapterSettings
    ) throws(AdapterSettings.Problem) -> (
        url: String, timeout: Duration, configuration: BookingAdapterService.Configuration
    ) {
        let url = try settings.url("booking-url", default: defaultURL)
        let timeout = try settings.milliseconds("timeout-ms", in: 1...600_000) ?? .seconds(5)
        var configuration = BookingAdapterService.Configuration()
        configuration.maxAttempts = try settings.count("max-attempts", in: 1...1000) ?? configuration.maxAttempts
        configuration.backoff.initial =
            try settings.milliseconds("backoff-initial-ms", in: 1...3_600_000) ?? configuration.backoff.initial
        configuration.backoff.maximum =
            try settings.milliseconds("backoff-max-ms", in: 1...86_400_000) ?? configuration.backoff.maximum
        return (url, timeout, configuration)
    }
}
