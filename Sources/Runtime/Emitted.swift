import Bus
import EventLog
import Guards
import SwiftProtobuf

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An event a reducer or a command emits: a generated message, compared by value.
public struct Emitted: Equatable, Sendable, CustomStringConvertible {
    public let message: any SwiftProtobuf.Message & Sendable

    public init(_ message: some SwiftProtobuf.Message & Sendable) {
        self.message = message
    }

    /// The message's full protobuf name, the type name on the bus.
    public var type: String { Swift.type(of: message).protoMessageName }

    /// The payload bytes; deterministic, as every event type has no maps.
    public func payload() throws -> Data { try message.serializedData() }

    /// The event to publish.
    public func outgoing(
        id: EventID, module: String, causation: UInt64 = 0, correlation: EventID? = nil
    ) throws
        -> OutgoingEvent
    {
        OutgoingEvent(
            id: id, type: type, payload: try payload(), module: module, causation: causation, correlation: correlation)
    }

    public static func == (lhs: Emitted, rhs: Emitted) -> Bool {
        lhs.message.isEqualTo(message: rhs.message)
    }

    public var description: String {
        do {
            return "\(type) \(try message.jsonString())"
        } catch {
            return "\(type) <not encodable as JSON: \(error)>"
        }
    }
}

extension EventID {
    /// The id of a reducer's output: the same module, input position and output index give
    /// the same id, so outputs computed again after a crash are recognised.
    ///
    /// The high half is FNV-1a of the module name with the UUID version nibble 8; the low
    /// half is the position (up to 2^46) and the index (up to 65,535) with the RFC 4122 variant.
    public static func derived(module: String, position: UInt64, index: Int) -> EventID {
        let high = (FNV1a.hash(module) & ~UInt64(0xF000)) | 0x8000
        let low =
            (UInt64(0b10) << 62) | ((position & ((1 << 46) - 1)) << 16) | UInt64(UInt16(truncatingIfNeeded: index))
        return EventID(high: high, low: low)
    }
}
