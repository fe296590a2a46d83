import Bus
import EventLog

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What replay rebuilt at one position: each reducer's state and each projection's value.
public struct ReplaySnapshot: Sendable, Equatable {
    public struct ModuleState: Sendable, Equatable {
        public let module: String
        /// Inputs applied up to the position.
        public let inputs: Int
        /// The position of the last of them; 0 if none.
        public let lastInput: UInt64
        public let malformedInputs: Int
        /// The reducer's state, as a snapshot holds it.
        public let state: JSONValue
    }

    public struct ProjectionValue: Sendable, Equatable {
        public let name: String
        public let value: JSONValue
        /// The value as `bureau show` prints it.
        public let text: String
    }

    /// The last event folded in; 0 for the empty log.
    public let position: UInt64
    public let time: CommitTime?
    public let modules: [ModuleState]
    public let projections: [ProjectionValue]

    public func module(_ name: String) -> ModuleState? { modules.first { $0.module == name } }
    public func projection(_ name: String) -> ProjectionValue? { projections.first { $0.name == name } }

    /// Everything as one JSON document: position, time, modules (by name), projections (by name).
    public var json: JSONValue {
        .object([
            ("position", .integer(position)),
            ("time", time.map { .string("\($0)") } ?? .null),
            (
                "modules",
                .object(
                    modules.map { module in
                        (
                            module.module,
                            .object([
                                ("inputs", .integer(module.inputs)), ("lastInput", .integer(module.lastInput)),
                                ("malformedInputs", .integer(module.malformedInputs)), ("state", module.state),
                            ])
                        )
                    })
            ),
            ("projections", .object(projections.map { ($0.name, $0.value) })),
        ])
    }

    /// What changed from `self` to `later`: per reducer state (`"watchlist"`) and per
    /// projection (`"projection watchlist"`), only those that changed.
    public func changes(to later: ReplaySnapshot) -> [StateChange] {
        var result: [StateChange] = []
        for module in later.modules {
            let before = self.module(module.module)?.state ?? .null
            let differences = before.differences(to: module.state)
            if !differences.isEmpty { result.append(StateChange(owner: module.module, differences: differences)) }
        }
        for projection in later.projections {
            let before = self.projection(projection.name)?.value ?? .null
            let differences = before.differences(to: projection.value)
            if !differences.isEmpty {
                result.append(StateChange(owner: "projection " + projection.name, differences: differences))
            }
        }
        return result
    }
}
