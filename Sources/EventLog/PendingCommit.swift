import Foundation

/// A commit under way: what ``EventLog/beginCommit(whenFinished:)`` started, for the caller to
/// complete with ``EventLog/finishCommit(_:)`` once it has finished.
///
/// Until then nothing it covers may be acknowledged or published: the records are written, not
/// yet durable.
public final class PendingCommit: @unchecked Sendable {
    /// The log's head when the commit began: every record through it is durable once it succeeds.
    public let head: UInt64
    /// Where the records it covers end in the segment it syncs.
    let end: Int64

    // Guarded by `condition`.
    private let condition = NSCondition()
    private var outcome: Result<Void, EventLogError>?
    private var duration: Duration?

    init(head: UInt64, end: Int64) {
        self.head = head
        self.end = end
    }

    /// Whether it has finished, well or not: ``EventLog/finishCommit(_:)`` will not wait.
    public var isFinished: Bool {
        condition.lock()
        defer { condition.unlock() }
        return outcome != nil
    }

    /// How long its fdatasync took, once it has finished well.
    public var syncDuration: Duration? {
        condition.lock()
        defer { condition.unlock() }
        return duration
    }

    /// Records how it ended, and how long its fdatasync took; called once, by the thread that ran it.
    func finish(_ outcome: Result<Void, EventLogError>, took duration: Duration? = nil) {
        condition.lock()
        self.outcome = outcome
        self.duration = duration
        condition.broadcast()
        condition.unlock()
    }

    /// How it ended, waiting until it has.
    func wait() -> Result<Void, EventLogError> {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let outcome { return outcome }
            condition.wait()
        }
    }
}
