/// What the front-end knows about its link to the bus.
public struct Connection: Sendable, Equatable {
    public var isConnected: Bool
    /// The highest position the bus has reported or delivered.
    public var head: UInt64
    /// Whether the subscription has read the log up to the head at least once since connecting.
    public var caughtUp: Bool
    /// Why the link is down, when it is.
    public var problem: String?

    public init(isConnected: Bool = false, head: UInt64 = 0, caughtUp: Bool = false, problem: String? = nil) {
        self.isConnected = isConnected
        self.head = head
        self.caughtUp = caughtUp
        self.problem = problem
    }
}
