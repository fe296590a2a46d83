/// An event of an older shape that its upcaster could not read as today's: what reads it
/// reports it as a malformed input, naming the position and the upcaster, and passes over it.
public struct UpcastFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public let position: UInt64
    /// The type as stored.
    public let storedType: String
    /// The type it was to be read as.
    public let type: String
    public let upcaster: String
    public let reason: String

    public var description: String {
        "position \(position): the \(storedType) stored there could not be read as \(type): \(upcaster) failed: \(reason)"
    }
}
