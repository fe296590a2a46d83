import BureauSchemas
import Bus
import EventLog
import Runtime
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A fixture or deployment could not do what a test asked, for a reason outside the expectations.
public struct BusTestingError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
