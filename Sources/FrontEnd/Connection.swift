/// What the front-end knows about its link to the bus.
public struct Connection: Sendable, Equatable {
    public var isConnected: Bool
    /// The highest position the bus has reported or delivered.
    public var head: UInt64
    /// Whether the subscription has read the log up to the head at least once since connecting.
    public var caughtUp: Bool
    /// Why the link is down, when it is.
    public var problem: String?
    /// The position of the last event delivered: a new subscription starts after it.
    public var delivered: UInt64
    /// Subscriptions that ended in a row, without an event or a catch-up between them: what the
    /// next one's backoff counts.
    public var failures: Int
    /// Why the front-end stopped following the bus for good: the bus's log ends before what it
    /// has shown, so it is not the log the front-end read. Only a restart (which reads the bus's
    /// log from the start) clears it.
    public var stopped: String?

    public init(
        isConnected: Bool = false, head: UInt64 = 0, caughtUp: Bool = false, problem: String? = nil,
        delivered: UInt64 = 0, failures: Int = 0, stopped: String? = nil
    ) {
        self.isConnected = isConnected
        self.head = head
        self.caughtUp = caughtUp
        self.problem = problem
        self.delivered = delivered
        self.failures = failures
        self.stopped = stopped
    }
}
