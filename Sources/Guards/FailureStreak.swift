/// The failures in a row of something a loop tries turn after turn (a poll, a read): says when
/// to tell, so that a failure that persists is said once when it starts and once when it ends,
/// never every turn.
public struct FailureStreak: Sendable, Equatable {
    /// Failures since the last success.
    public private(set) var count = 0

    public init() {}

    /// Records a failure; true for the first of a streak, the one to tell.
    public mutating func failed() -> Bool {
        count += 1
        return count == 1
    }

    /// Records a success; the number of failures in the streak it ends, 0 if none.
    public mutating func succeeded() -> Int {
        defer { count = 0 }
        return count
    }
}
