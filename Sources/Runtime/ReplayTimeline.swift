import Bus
import EventLog

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Time travel over a log directory: the states at any position, and what one event changed.
///
/// For a front-end that steps forward and back. Going forward continues the fold; going back
/// folds again from the start (the log is the only copy of the past), so recent snapshots are
/// kept to make stepping back and forth over them immediate.
public final class ReplayTimeline {
    public let directory: String
    private let makeReplay: () -> LogReplay
    private var replay: LogReplay
    private var cache: [UInt64: ReplaySnapshot] = [:]
    private var cacheOrder: [UInt64] = []
    private let cacheLimit = 256

    /// A timeline over the log in `directory` (a data directory's `log`) with these modules.
    public init(directory: String, registry: ModuleRegistry, module: String? = nil) {
        self.directory = directory
        makeReplay = { LogReplay(registry: registry, module: module) }
        replay = makeReplay()
    }

    /// A timeline with explicit reducers and projections (tests, a changed reducer).
    public init(directory: String, reducers: [any Reducer], projections: [AnyProjection]) {
        self.directory = directory
        makeReplay = { LogReplay(reducers: reducers, projections: projections) }
        replay = makeReplay()
    }

    /// The log's last committed position, read from the files now.
    public func head() throws -> UInt64 {
        let cursor = try LogCursor(directory: directory, after: max(replay.position, 1) - 1)
        var last = replay.position
        while let record = try cursor.next() { last = record.position }
        return last
    }

    /// The states after the event at `position` (0: before any); past the end of the log,
    /// the states at its end. `progress` hears the position folded so far.
    public func snapshot(at position: UInt64, progress: (UInt64) -> Void = { _ in }) throws -> ReplaySnapshot {
        if let cached = cache[position] { return cached }
        try fold(to: position, progress: progress)
        let snapshot = try replay.snapshot()
        // Past the end the log may still grow: only a position reached is certain.
        if replay.position == position { remember(snapshot, at: position) }
        return snapshot
    }

    /// The event at `position` and the snapshots either side of it; nil if the log has no such position.
    public func step(at position: UInt64, progress: (UInt64) -> Void = { _ in }) throws -> ReplayStep? {
        guard position >= 1, let event = try event(at: position) else { return nil }
        let before = try snapshot(at: position - 1, progress: progress)
        let after = try snapshot(at: position, progress: progress)
        return ReplayStep(event: event, before: before, after: after)
    }

    /// The event at `position`, read from the files; nil past the end.
    public func event(at position: UInt64) throws -> StoredEvent? {
        guard position >= 1 else { return nil }
        let cursor = try LogCursor(directory: directory, after: position - 1, limit: position)
        guard let record = try cursor.next() else { return nil }
        return try StoredEvent(envelopeBytes: record.body)
    }

    /// The position of the last event committed at or before `time`; 0 if none is.
    public func position(atOrBefore time: CommitTime) throws -> UInt64 {
        let cursor = try LogCursor(directory: directory, after: 0)
        var found: UInt64 = 0
        var names = TypeNameCache()
        while let record = try cursor.next() {
            let event = try StoredEvent(envelopeBytes: record.body, names: &names)
            if event.commitTime > time { break }
            found = event.position
        }
        return found
    }

    private func fold(to position: UInt64, progress: (UInt64) -> Void) throws {
        if position < replay.position { replay = makeReplay() }
        guard position > replay.position else { return }
        let cursor = try LogCursor(directory: directory, after: replay.position, limit: position)
        var names = TypeNameCache()
        while let record = try cursor.next() {
            replay.apply(try StoredEvent(envelopeBytes: record.body, names: &names))
            progress(record.position)
        }
    }

    private func remember(_ snapshot: ReplaySnapshot, at position: UInt64) {
        if cache.updateValue(snapshot, forKey: position) == nil { cacheOrder.append(position) }
        if cacheOrder.count > cacheLimit { cache[cacheOrder.removeFirst()] = nil }
    }
}
