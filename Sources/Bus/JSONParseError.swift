#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// JSON that does not parse, and where.
public struct JSONParseError: Error, CustomStringConvertible {
    /// The byte offset of the problem.
    public let offset: Int
    public let reason: String
    public var description: String { "\(reason) at byte \(offset)" }
}
