/// Why a deployment could not start or had to stop.
public struct SupervisorError: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
