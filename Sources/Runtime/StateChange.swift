import Bus
import EventLog

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The fields of one reducer's state, or one projection's value, that an event changed.
public struct StateChange: Sendable, Equatable {
    /// The module (its reducer state) or `projection NAME`.
    public let owner: String
    public let differences: [FieldDifference]
}
