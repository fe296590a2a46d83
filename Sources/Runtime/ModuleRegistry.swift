import Bus
import Logging
import ServiceLifecycle

/// The features a build knows, by name.
public struct ModuleRegistry: Sendable {
    public let modules: [FeatureModule]

    public init(_ modules: [FeatureModule]) {
        self.modules = modules
    }

    public func module(named name: String) -> FeatureModule? {
        modules.first { $0.name == name }
    }

    /// The names of the modules that have a reducer to host.
    public var hostable: [String] { modules.filter { $0.makeHost != nil }.map(\.name) }

    public var router: CommandRouter { CommandRouter(commands: modules.flatMap(\.commands)) }

    public var projections: [AnyProjection] { modules.flatMap(\.projections) }

    /// Every module's upcasters as one set, checked: a process builds it at start and refuses
    /// to start if it throws (two upcasters for one shape, a cycle, a chain that stops short).
    public func upcasting() throws(UpcastingError) -> EventUpcasting {
        try EventUpcasting(modules.flatMap(\.upcasters), readTypes: Set(modules.flatMap(\.readTypes)))
    }
}
