import Bus
import SwiftProtobuf

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An event of an input type whose payload does not decode as that type.
public struct MalformedInput: Error, CustomStringConvertible {
    public let position: UInt64
    public let type: String
    public let reason: String
    public var description: String { "position \(position): the \(type) payload does not decode: \(reason)" }

    @usableFromInline
    init(position: UInt64, type: String, reason: String) {
        self.position = position
        self.type = type
        self.reason = reason
    }
}
