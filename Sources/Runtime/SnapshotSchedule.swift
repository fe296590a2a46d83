import Guards

/// When a ``ReducerHost`` saves its snapshot: every ``every`` inputs applied live, and after a
/// save failed not before the backoff's delay has passed (a store that is away is not asked
/// at every input). A value the host asks and tells; it does no saving itself.
struct SnapshotSchedule: Sendable {
    let every: Int
    let retry: Backoff
    /// Inputs applied live since the last save.
    private(set) var sinceSaved = 0
    /// Saves that failed in a row.
    private(set) var failedSaves = 0
    /// When the next save may be tried, after a failure.
    private(set) var retryAt: ContinuousClock.Instant?

    init(every: Int, retry: Backoff) {
        self.every = every
        self.retry = retry
    }

    /// An input was applied live.
    mutating func applied() {
        sinceSaved += 1
    }

    /// Whether a save is due after the inputs applied, at `now`.
    func isDue(at now: ContinuousClock.Instant) -> Bool {
        sinceSaved >= every && retryAt.map { $0 <= now } ?? true
    }

    /// A save failed at `now`: how long until the next may be tried.
    mutating func failed(at now: ContinuousClock.Instant) -> Duration {
        failedSaves += 1
        let delay = retry.delay(attempt: failedSaves)
        retryAt = now + delay
        return delay
    }

    /// A save succeeded: how many had failed in a row before it.
    mutating func saved() -> Int {
        defer {
            failedSaves = 0
            retryAt = nil
            sinceSaved = 0
        }
        return failedSaves
    }
}
