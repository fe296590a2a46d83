/// An append-only, position-ordered store of events with one writer.
///
/// Positions start at 1 and have no holes. Appends are made durable by ``commit()`` as the
/// implementation's durability policy says. Ids of recent appends are remembered, so that a
/// retried append can be recognised (see ``position(of:)``).
///
/// ``FileEventLog`` keeps segment files on disk; `InMemoryEventLog` (in `InMemoryStores`) is its
/// twin for tests.
/// Both pass the same contract suite.
public protocol EventLog: AnyObject {
    /// The position of the last record; 0 when the log is empty.
    var head: UInt64 { get }
    /// The last record, if any.
    var lastRecord: LogRecord? { get }
    /// The position of the event with this id, if it is among the recent ones remembered.
    func position(of id: EventID) -> UInt64?
    /// ``position(of:)`` for each of `ids`, in order; what the bus asks once per request.
    func positions(of ids: [EventID]) -> [UInt64?]
    /// What the bus asks before it appends a batch: for each of `ids` in order, the position
    /// of the event with that id if the log remembers one, or the position given to an earlier
    /// occurrence within `ids`; nil for each id that is new, which is claimed at the next
    /// position from `first` (head + 1) — the positions the caller then appends those ids at,
    /// in order. A log may keep the claims so that the append costs less; claims are forgotten
    /// if the next append is not of exactly those ids, and by the next claim.
    func claimPositions(_ ids: [EventID], from first: UInt64) -> [UInt64?]
    /// Appends records whose positions continue the log (head + 1, head + 2, …).
    func append(_ records: [LogRecord]) throws
    /// ``append(_:)-([LogRecord])`` for records whose bodies share one buffer.
    func append(_ batch: RecordBatch) throws
    /// Makes what was appended durable as the policy says, before anything of it is acknowledged.
    func commit() throws
    /// Starts what ``commit()`` does without making the caller wait, where the log can: returns
    /// the commit under way and calls `finished`, on another thread, once it has finished
    /// (`finished` must not touch the log: it only tells the caller, who then calls
    /// ``finishCommit(_:)`` and only after that acknowledges or publishes what the commit covers). Returns nil when the log has committed already, as ``commit()``
    /// would (and then `finished` is not called). Records may be appended while a commit is
    /// under way; they are made durable by the next one. A second commit begun while one is
    /// under way waits for the first.
    func beginCommit(whenFinished finished: @escaping @Sendable () -> Void) throws -> PendingCommit?
    /// Completes a commit ``beginCommit(whenFinished:)`` started, waiting for it if it has not
    /// finished; throws what ``commit()`` would have thrown.
    func finishCommit(_ commit: PendingCommit) throws
    /// Makes what was appended durable if the policy's interval has passed; called on a timer.
    func syncIfDue() throws
    /// Makes everything durable and releases the log.
    func close() throws
    /// A reader for another thread; it sees records once they are appended.
    func makeReader() throws -> any EventLogReader
}

extension EventLog {
    /// ``commit()``, at once: for logs whose commit has nothing to overlap with the caller's work.
    public func beginCommit(whenFinished finished: @escaping @Sendable () -> Void) throws -> PendingCommit? {
        try commit()
        return nil
    }

    /// Nothing is ever under way for a log that commits at once.
    public func finishCommit(_ commit: PendingCommit) throws {}

    /// ``positions(of:)``, with the new ids numbered from `first`; nothing is kept.
    public func claimPositions(_ ids: [EventID], from first: UInt64) -> [UInt64?] {
        EventPositionTable.claims(ids, known: positions(of: ids), from: first)
    }

    /// The records copied out of the batch, appended as ``append(_:)-([LogRecord])`` does.
    public func append(_ batch: RecordBatch) throws {
        try append(batch.records)
    }

    /// One ``position(of:)`` after another; logs whose lookups can overlap do better.
    public func positions(of ids: [EventID]) -> [UInt64?] {
        ids.map { position(of: $0) }
    }
}
