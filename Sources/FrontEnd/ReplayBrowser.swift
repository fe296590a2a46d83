import Bus
import Runtime
import Synchronization
import TerminalUI

/// Time travel over a recorded log: the screens as they were after any event, that event,
/// and the state difference it caused. A value; keys move it, nothing is published. The
/// front-end's state in it changes only through ``Coordinator/handle(_:in:)``,
/// as live: each event folded is delivered to it, and so are the screen keys; the browser keeps
/// only its own place (which event, the jump prompt).
///
/// Moving forward folds only the events in between. Moving back starts from the nearest
/// checkpoint at or before the target (one is kept every `checkpointInterval` events folded,
/// at most about 64 in all), so a step back costs at most one interval's events, not a pass
/// over the whole log.
public struct ReplayBrowser: Sendable {
    public let events: [StoredEvent]
    /// How many events are applied: 0 (before the first) to `events.count`.
    public private(set) var applied = 0
    /// The front-end's state after `applied` events (screens, navigation).
    public private(set) var state = AppState()
    /// What the last applied event changed in the reducers' states and the read models.
    public private(set) var changes: [StateChange] = []
    /// Text typed after `g`: a position, or a time such as 2026-11-22T02:20:00Z.
    public private(set) var jumpPrompt: String?
    public private(set) var problem: String?
    /// How many events apart checkpoints are.
    public let checkpointInterval: Int
    /// What every change to ``state`` goes through.
    public let coordinator: Coordinator
    private let makeReplay: @Sendable () -> LogReplay
    /// Where the fold stands; copied before a change when another browser value shares it.
    private var cursor: Cursor
    private let checkpoints = Checkpoints()

    /// - Parameters:
    ///   - makeReplay: a fresh offline replay of every module (reducers and read models).
    ///   - checkpointInterval: events between checkpoints; by default the larger of 1,000 and
    ///     a 64th of the events.
    public init(
        events: [StoredEvent], coordinator: Coordinator, checkpointInterval: Int? = nil,
        makeReplay: @escaping @Sendable () -> LogReplay
    ) {
        self.events = events
        self.coordinator = coordinator
        self.makeReplay = makeReplay
        self.checkpointInterval = max(1, checkpointInterval ?? max(1_000, events.count / 64))
        cursor = Cursor(replay: makeReplay(), state: AppState(), applied: 0)
    }

    /// The event applied last, if any.
    public var current: StoredEvent? { applied > 0 ? events[applied - 1] : nil }

    /// Handles a key; returns false when the person quits.
    public mutating func handle(_ key: Key) -> Bool {
        if jumpPrompt != nil { return handlePrompt(key) }
        problem = nil
        switch key {
        case .right, .character("n"), .character("l"): move(to: applied + 1)
        case .left, .character("p"), .character("h"): move(to: applied - 1)
        case .pageDown: move(to: applied + 100)
        case .pageUp: move(to: applied - 100)
        case .home: move(to: 0)
        case .end: move(to: events.count)
        case .character("g"): jumpPrompt = ""
        case .character("q"), .control("c"): return false
        default:
            // Screen keys (1 2 3, Tab, arrows in lists) work as live; actions are read-only here.
            let effects = coordinator.handle(.key(key), in: &state)
            if effects.contains(where: { if case .quit = $0 { true } else { false } }) { return false }
            if effects.contains(where: { if case .dispatch = $0 { true } else { false } }) {
                problem = "replay is read-only: nothing is sent"
            }
        }
        return true
    }

    /// The terminal now has `size`: the screens are drawn to fill it, at every event.
    public mutating func resize(to size: TerminalSize) {
        _ = coordinator.handle(.resized(size), in: &state)
    }

    private mutating func handlePrompt(_ key: Key) -> Bool {
        switch key {
        case .escape: jumpPrompt = nil
        case .backspace: jumpPrompt = jumpPrompt.map { String($0.dropLast()) }
        case .character(let character): jumpPrompt?.append(character)
        case .enter:
            let text = jumpPrompt ?? ""
            jumpPrompt = nil
            if let position = UInt64(text) {
                // Applied through the event at `position` (positions are 1…N in a whole log).
                move(to: events.firstIndex { $0.position > position } ?? events.count)
            } else if let time = CommitTime(text) {
                move(to: events.firstIndex { $0.commitTime > time } ?? events.count)
            } else {
                problem = "'\(text)' is neither a position nor a time like 2026-11-22T02:20:00Z"
            }
        default: break
        }
        return true
    }

    /// Shows the state after `count` events.
    public mutating func move(to count: Int) {
        let target = min(max(count, 0), events.count)
        guard target != applied else { return }
        // A checkpoint strictly before the target, so that the last event is folded here and its
        // difference shown; going forward, only one past the cursor is worth taking.
        if target < cursor.applied {
            cursor =
                checkpoints.latest(atOrBefore: target - 1, after: -1)
                ?? Cursor(replay: makeReplay(), state: AppState(), applied: 0)
        } else if let ahead = checkpoints.latest(atOrBefore: target - 1, after: cursor.applied) {
            cursor = ahead
        } else if !isKnownUniquelyReferenced(&cursor) {
            cursor = cursor.copy()
        }
        var before: ReplaySnapshot?
        var unshown: (any Error)?
        while cursor.applied < target {
            let event = events[cursor.applied]
            if cursor.applied == target - 1 {
                do { before = try cursor.replay.snapshot() } catch { unshown = error }
            }
            _ = coordinator.handle(.delivered(.event(event)), in: &cursor.state)
            cursor.replay.apply(event)
            cursor.applied += 1
            if cursor.applied % checkpointInterval == 0 { checkpoints.keep(cursor) }
        }
        changes = []
        if let before {
            do { changes = before.changes(to: try cursor.replay.snapshot()) } catch { unshown = error }
        }
        // Not an empty difference unexplained: that would say the event changed nothing.
        if let unshown { problem = "the state difference cannot be shown: \(unshown)" }
        // The fold's screens, seen from where the person is: their navigation and terminal size
        // came through the coordinator's `handle` on `state` (keys, ``resize(to:)``).
        var shown = cursor.state
        shown.navigation = state.navigation
        shown.size = state.size
        // The whole log is at hand: the screens are as caught up as a live front-end at its head.
        _ = coordinator.handle(.delivered(.caughtUp(head: events.last?.position ?? 0)), in: &shown)
        state = shown
        applied = target
    }

    /// The replay and the front-end's read models after `applied` events.
    private final class Cursor: @unchecked Sendable {
        // Unchecked: a cursor is changed only by the one browser value holding the only
        // reference to it (``move(to:)`` copies it otherwise), and checkpoints hold copies
        // that are never changed.
        let replay: LogReplay
        var state: AppState
        var applied: Int

        init(replay: LogReplay, state: AppState, applied: Int) {
            self.replay = replay
            self.state = state
            self.applied = applied
        }

        func copy() -> Cursor { Cursor(replay: replay.copy(), state: state, applied: applied) }
    }

    /// Copies of the cursor at multiples of the checkpoint interval, shared by copies of a browser.
    private final class Checkpoints: Sendable {
        private let byCount = Mutex<[Int: Cursor]>([:])

        func keep(_ cursor: Cursor) {
            guard byCount.withLock({ $0[cursor.applied] == nil }) else { return }
            let copy = cursor.copy()
            byCount.withLock { $0[copy.applied] = copy }
        }

        /// A copy, free to change, of the latest checkpoint at or before `count` and after `after`.
        func latest(atOrBefore count: Int, after: Int) -> Cursor? {
            let found = byCount.withLock { byCount in
                byCount.filter { $0.key <= count && $0.key > after }.max { $0.key < $1.key }?.value
            }
            return found?.copy()
        }
    }
}
