/// A server or host a test asked for could not be made or used, and why.
public struct TestServerError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
