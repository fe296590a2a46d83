import Bus
import Logging
import Runtime
import ServiceLifecycle

/// Where a bus-level test runs, as Hummingbird's tests run on `.router` and `.live`: on the
/// in-memory twin (``inMemory``: no daemon, no sockets, no files; the default, for every test),
/// or on a real daemon in the test's process (``live``: the same test body, for a smaller tier
/// that proves the twin tells the truth).
public enum BusTier: String, Sendable, CaseIterable, CustomStringConvertible {
    case inMemory
    case live

    public var description: String { rawValue }

    /// A fresh deployment of this tier with `modules` hosted and `services` built on its bus.
    public func deployment(
        modules: [FeatureModule] = [], settings: [String: String] = [:],
        services: [@Sendable (any EventBus) throws -> any Service] = [], logger: Logger
    ) async throws -> TestDeployment {
        switch self {
        case .inMemory:
            try await TestDeployment.inMemory(modules: modules, settings: settings, services: services, logger: logger)
        case .live:
            try await TestDeployment.inProcess(modules: modules, settings: settings, services: services, logger: logger)
        }
    }

    /// Runs `body` on a fresh deployment of this tier (see ``deployment(modules:settings:services:logger:)``),
    /// then stops it, also when `body` throws.
    public func withDeployment<T: Sendable>(
        modules: [FeatureModule] = [], settings: [String: String] = [:],
        services: [@Sendable (any EventBus) throws -> any Service] = [], logger: Logger,
        _ body: (TestDeployment) async throws -> T
    ) async throws -> T {
        try await deployment(modules: modules, settings: settings, services: services, logger: logger).run(body)
    }
}
