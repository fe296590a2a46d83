import Foundation
import Runtime

/// The rates adapter as a module `bureau run` can host.
///
/// Settings: `rates-url` (default the embedded server), `poll-ms`, `timeout-ms`,
/// `backoff-initial-ms`, `backoff-max-ms`.
public enum RatesAdapterModule {
    public static let defaultURL = "http://127.0.0.1:8561/stats/eurofxref/eurofxref-daily.xml"

    public static func make() -> FeatureModule {
        FeatureModule(name: RatesAdapterService.module, summary: "polls a rates source and publishes RatesPublished") {
            environment in
            let settings = try AdapterSettings(environment.settings)
            let url = settings.text("rates-url") ?? defaultURL
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil
            else {
                throw AdapterSettings.Problem("rates-url '\(url)' is not an http(s) URL")
            }
            var configuration = RatesAdapterService.Configuration()
            configuration.interval = try settings.milliseconds("poll-ms") ?? configuration.interval
            configuration.backoff.initial =
                try settings.milliseconds("backoff-initial-ms") ?? configuration.backoff.initial
            configuration.backoff.maximum = try settings.milliseconds("backoff-max-ms") ?? configuration.backoff.maximum
            let statistics = environment.statistics
            configuration.onReady = { statistics?.caughtUp(head: 0) }
            let timeout = try settings.milliseconds("timeout-ms") ?? .seconds(5)
            return RatesAdapterService(
                source: HTTPRatesSource(url: url, timeout: timeout), client: environment.client,
                snapshots: environment.snapshots, configuration: configuration, logger: environment.logger)
        }
    }
}

/// Adapter settings from the command line, with errors that name the setting.
public struct AdapterSettings: Sendable {
    public struct Problem: Error, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    let values: [String: String]

    public init(_ values: [String: String]) throws(Problem) {
        self.values = values
    }

    public func text(_ name: String) -> String? { values[name] }

    /// A positive number of milliseconds, if the setting is given.
    public func milliseconds(_ name: String) throws(Problem) -> Duration? {
        guard let text = values[name] else { return nil }
        guard let value = Int(text), value > 0 else {
            throw Problem("\(name) '\(text)' is not a positive number of milliseconds")
        }
        return .milliseconds(value)
    }
}
