import Foundation
import Runtime

/// The booking adapter as a module `bureau run` can host.
///
/// Settings: `booking-url` (default the embedded server), `timeout-ms`, `max-attempts`,
/// `backoff-initial-ms`, `backoff-max-ms`.
public enum BookingAdapterModule {
    public static let defaultURL = "http://127.0.0.1:8562"

    public static func make() -> FeatureModule {
        FeatureModule(name: "booking-adapter", summary: "books accepted reservations with the booking service") {
            environment in
            let settings = environment.settings
            let url = settings["booking-url"] ?? defaultURL
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil
            else {
                throw SettingProblem("booking-url '\(url)' is not an http(s) URL")
            }
            func milliseconds(_ name: String) throws -> Duration? {
                guard let text = settings[name] else { return nil }
                guard let value = Int(text), value > 0 else {
                    throw SettingProblem("\(name) '\(text)' is not a positive number of milliseconds")
                }
                return .milliseconds(value)
            }
            var configuration = BookingAdapterService.Configuration()
            let statistics = environment.statistics
            configuration.onReady = { statistics?.caughtUp(head: 0) }
            if let text = settings["max-attempts"] {
                guard let attempts = Int(text), attempts > 0 else {
                    throw SettingProblem("max-attempts '\(text)' is not a positive number")
                }
                configuration.maxAttempts = attempts
            }
            configuration.backoff.initial = try milliseconds("backoff-initial-ms") ?? configuration.backoff.initial
            configuration.backoff.maximum = try milliseconds("backoff-max-ms") ?? configuration.backoff.maximum
            return BookingAdapterService(
                service: HTTPBookingService(baseURL: url, timeout: try milliseconds("timeout-ms") ?? .seconds(5)),
                client: environment.client, snapshots: environment.snapshots, configuration: configuration,
                logger: environment.logger)
        }
    }
}

struct SettingProblem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
