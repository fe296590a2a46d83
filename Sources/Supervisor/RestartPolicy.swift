import Guards

/// When a process that failed is started again: exponential backoff with a cap, a limit.
public struct RestartPolicy: Sendable, Equatable {
    public var initialBackoff: Duration
    public var maximumBackoff: Duration
    /// Failures in a row allowed before the process is left stopped as crash-looping.
    public var maximumRestarts: Int
    /// A process that ran at least this long before it failed starts counting afresh: a crash
    /// a day apart from the last is not a crash loop.
    public var resetAfter: Duration

    public init(
        initialBackoff: Duration = .milliseconds(500), maximumBackoff: Duration = .seconds(15),
        maximumRestarts: Int = 5, resetAfter: Duration = .seconds(60)
    ) {
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
        self.maximumRestarts = maximumRestarts
        self.resetAfter = resetAfter
    }

    /// The wait before restart number `restart` (1-based): doubling from the initial backoff,
    /// capped; the shared ``Backoff``, without jitter (one supervisor restarts one process).
    public func backoff(beforeRestart restart: Int) -> Duration {
        Backoff(initial: initialBackoff, multiplier: 2, maximum: maximumBackoff, jitter: 0)
            .nominalDelay(attempt: restart)
    }
}
