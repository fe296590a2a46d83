import Foundation
import Runtime

/// The rates adapter as a module `bureau run` can host.
///
/// Settings: `rates-url` (default the embedded server), `poll-ms` (1 to 86400000),
/// `timeout-ms` (1 to 600000), `backoff-initial-ms` (1 to 3600000), `backoff-max-ms`
/// (1 to 86400000).
public enum RatesAdapterModule {
    public static let defaultURL = "http://127.0.0.1:8561/stats/eurofxref/eurofxref-daily.xml"

    public static func make() -> FeatureModule {
        FeatureModule(name: RatesAdapterService.module, summary: "polls a rates source and publishes RatesPublished") {
            environment in
            var (url, configuration) = try Self.configuration(AdapterSettings(environment.settings))
            let statistics = environment.statistics
            configuration.onReady = { statistics?.caughtUp(head: 0) }
            return RatesAdapterService(
                source: HTTPRatesSource(url: url, timeout: configuration.timeout), client: environment.client,
                snapshots: environment.snapshots, configuration: configuration, logger: environment.logger)
        }
    }

    /// The source URL and the adapter's configuration from `settings`; throws for a setting it
    /// cannot use, naming it.
    public static func configuration(
        _ settings: AdapterSettings
    ) throws(AdapterSettings.Problem) -> (url: String, configuration: RatesAdapterService.Configuration) {
        let url = try settings.url("rates-url", default: defaultURL)
        var configuration = RatesAdapterService.Configuration()
        configuration.interval = try settings.milliseconds("poll-ms", in: 1...86_400_000) ?? configuration.interval
        configuration.timeout = try settings.milliseconds("timeout-ms", in: 1...600_000) ?? configuration.timeout
        configuration.backoff.initial =
            try settings.milliseconds("backoff-initial-ms", in: 1...3_600_000) ?? configuration.backoff.initial
        configuration.backoff.maximum =
            try settings.milliseconds("backoff-max-ms", in: 1...86_400_000) ?? configuration.backoff.maximum
        return (url, configuration)
    }
}
