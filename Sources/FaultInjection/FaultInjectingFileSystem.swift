import EventLog
import Foundation
import Guards
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A ``FileSystem`` that makes the Nth call fail, as SQLite's test harness does: for every N
/// over a workload, so that every write the log makes is shown to fail safely.
///
/// The faults, and the calls that count towards N for each:
///
/// | fault | counts | what happens |
/// |---|---|---|
/// | `enospc` | every call that changes the disk | `ENOSPC`; the disk stays full (writes that would grow a file or create a directory fail) until ``freeSpace()`` |
/// | `eio` | every call that changes the disk | `EIO`, once |
/// | `short-write` | writes | half the bytes are written, then the disk is full as with `enospc` |
/// | `fdatasync` | `fdatasync` and `fsync` | `EIO`, once; a later sync of the same file is counted in ``retriedSyncs`` |
/// | `crash` | every call that changes the disk | the process dies there: a write first writes half its bytes. With ``Plan/killsProcess`` the process is sent `SIGKILL`; otherwise nothing reaches the disk from then on and every call fails with `EIO`, which is what the disk sees of a killed process |
///
/// Calls that change the disk: `write`, `fdatasync`, `fsync`, `ftruncate`, `fchmod`, `chmod`,
/// `rename`, `unlink`, `mkdir`, and `open` with `O_CREAT`.
///
/// Besides faults, a slow disk: after ``holdSyncs()`` every `fdatasync` and `fsync` waits until
/// ``releaseSyncs()``, so that a test can look at what a writer does while one is under way.
public final class FaultInjectingFileSystem: FileSystem {
    public enum Fault: String, Sendable, CaseIterable, CustomStringConvertible {
        case noSpace = "enospc"
        case io = "eio"
        case shortWrite = "short-write"
        case failedSync = "fdatasync"
        case crash

        public var description: String { rawValue }
    }

    /// Which fault, at which call.
    public struct Plan: Sendable, Equatable, CustomStringConvertible {
        public var fault: Fault
        /// 1 for the first call that counts.
        public var call: Int
        /// A `crash` sends the process `SIGKILL` instead of emulating its death.
        public var killsProcess: Bool

        public init(_ fault: Fault, at call: Int, killsProcess: Bool = false) {
            self.fault = fault
            self.call = call
            self.killsProcess = killsProcess
        }

        /// Parses `FAULT@N`, e.g. `enospc@17` or `crash@4`.
        public init(parsing text: String, killsProcess: Bool = false) throws(FaultPlanError) {
            let parts = text.split(separator: "@", maxSplits: 1)
            guard parts.count == 2, let fault = Fault(rawValue: String(parts[0])) else {
                throw FaultPlanError(text: text)
            }
            guard let call = Int(parts[1]), call >= 1 else { throw FaultPlanError(text: text) }
            self.init(fault, at: call, killsProcess: killsProcess)
        }

        public var description: String { "\(fault)@\(call)" }
    }

    private struct State {
        var plan: Plan?
        /// Calls counted so far, per fault kind.
        var counts: [Fault: Int] = [:]
        var full = false
        var crashed = false
        var injected: String?
        var failedSyncs: Set<Int32> = []
        var retriedSyncs = 0
        var paths: [Int32: String] = [:]
    }

    private let base: any FileSystem
    private let state: Mutex<State>
    private let gate = SyncGate()

    /// Whether syncs wait, and how many wait now, under a condition a held sync waits on.
    private final class SyncGate: @unchecked Sendable {
        let condition = NSCondition()
        // Guarded by `condition`.
        var holding = false
        var waiting = 0
    }

    /// - Parameter plan: the fault to inject; nil only counts the calls (a dry run that tells
    ///   how many there are to fail).
    public init(base: any FileSystem = PosixFileSystem(), plan: Plan?) {
        self.base = base
        state = Mutex(State(plan: plan))
    }

    /// How many calls counted towards each fault so far.
    public func count(of fault: Fault) -> Int {
        state.withLock { $0.counts[fault] ?? 0 }
    }

    /// What was injected, e.g. `ENOSPC at call 17: write 00000000000000000001.seg`; nil if nothing yet.
    public var injected: String? { state.withLock { $0.injected } }

    /// Whether a `crash` fault has happened.
    public var hasCrashed: Bool { state.withLock { $0.crashed } }

    /// `fdatasync` or `fsync` calls made on a file after one failed on it. Must stay 0.
    public var retriedSyncs: Int { state.withLock { $0.retriedSyncs } }

    /// From now on nothing reaches the disk, and every call that would change it fails with
    /// `EIO`: what the disk sees of a process killed now.
    public func crash() {
        state.withLock { $0.crashed = true }
    }

    /// Fills the disk now, as an `enospc` fault does, until ``freeSpace()``.
    public func fillDisk() {
        state.withLock { $0.full = true }
    }

    /// Ends an `enospc` or `short-write` fault: writes succeed again.
    public func freeSpace() {
        state.withLock { $0.full = false }
    }

    private enum Decision {
        case proceed
        case fail(Int32)
        /// Write this many bytes, then behave as the fault says.
        case partial(Int, then: Int32?)
        case kill
    }

    /// Counts a call and decides what happens to it.
    private func decide(_ kinds: Set<Fault>, operation: String, path name: String) -> Decision {
        state.withLock { state in
            if state.crashed { return .fail(EIO) }
            for kind in kinds { state.counts[kind, default: 0] += 1 }
            guard let plan = state.plan, kinds.contains(plan.fault), state.counts[plan.fault] == plan.call else {
                return .proceed
            }
            switch plan.fault {
            case .noSpace:
                state.full = true
                state.injected = "ENOSPC at call \(plan.call): \(operation) \(name)"
                return .fail(ENOSPC)
            case .io:
                state.injected = "EIO at call \(plan.call): \(operation) \(name)"
                return .fail(EIO)
            case .shortWrite:
                state.full = true
                state.injected = "a short write, then ENOSPC, at call \(plan.call): \(operation) \(name)"
                return .partial(0, then: nil)
            case .failedSync:
                state.injected = "EIO from \(operation) at call \(plan.call): \(name)"
                return .fail(EIO)
            case .crash:
                state.injected = "a crash at call \(plan.call): \(operation) \(name)"
                if plan.killsProcess { return .kill }
                state.crashed = true
                return .partial(0, then: EIO)
            }
        }
    }

    private func name(_ descriptor: Int32) -> String {
        state.withLock { $0.paths[descriptor] ?? "descriptor \(descriptor)" }
    }

    private static let changing: Set<Fault> = [.noSpace, .io, .crash]

    /// Performs a non-write call as decided; a crash or a partial write stops it before it reaches the disk.
    private func perform<T>(
        _ decision: Decision, _ call: () throws(SystemError) -> T
    ) throws(SystemError) -> T {
        switch decision {
        case .proceed: return try call()
        case .fail(let code): throw SystemError(code)
        case .partial(_, let then): throw SystemError(then ?? ENOSPC)
        case .kill:
            kill(getpid(), SIGKILL)
            throw SystemError(EIO)
        }
    }

    public func open(_ path: String, flags: Int32, mode: mode_t) throws(SystemError) -> Int32 {
        let descriptor: Int32
        if flags & O_CREAT != 0 {
            let decision = decide(Self.changing, operation: "open", path: path)
            descriptor = try perform(decision) { () throws(SystemError) in
                try base.open(path, flags: flags, mode: mode)
            }
        } else {
            if state.withLock({ $0.crashed }), flags & (O_WRONLY | O_RDWR) != 0 { throw SystemError(EIO) }
            descriptor = try base.open(path, flags: flags, mode: mode)
        }
        state.withLock { $0.paths[descriptor] = String(path.split(separator: "/").last ?? "") }
        return descriptor
    }

    public func close(_ descriptor: Int32) {
        state.withLock {
            $0.paths[descriptor] = nil
            $0.failedSyncs.remove(descriptor)
        }
        base.close(descriptor)
    }

    public func read(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64
    )
        throws(SystemError) -> Int
    {
        try base.read(descriptor, into: buffer, at: offset)
    }

    public func write(
        _ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64
    ) throws(SystemError)
        -> Int
    {
        let decision = decide(Self.changing.union([.shortWrite]), operation: "write", path: name(descriptor))
        switch decision {
        case .proceed:
            // A full disk still takes writes over bytes the file already has (as ext4 and tmpfs do).
            if state.withLock({ $0.full }) {
                let size = try base.size(of: descriptor)
                if offset + Int64(bytes.count) > size { throw SystemError(ENOSPC) }
            }
            return try base.write(descriptor, bytes, at: offset)
        case .fail(let code):
            throw SystemError(code)
        case .partial(_, let then):
            let half = bytes.count / 2
            if half > 0 {
                _ = try base.write(descriptor, UnsafeRawBufferPointer(rebasing: bytes[0..<half]), at: offset)
            }
            if let then { throw SystemError(then) }
            // A short write reports what it wrote; the caller's next write meets the full disk.
            if half > 0 { return half }
            throw SystemError(ENOSPC)
        case .kill:
            let half = bytes.count / 2
            if half > 0 {
                _ = try? base.write(descriptor, UnsafeRawBufferPointer(rebasing: bytes[0..<half]), at: offset)
            }
            kill(getpid(), SIGKILL)
            throw SystemError(EIO)
        }
    }

    public func dataSync(_ descriptor: Int32) throws(SystemError) {
        try synchronise(descriptor, operation: "fdatasync") { () throws(SystemError) in try base.dataSync(descriptor) }
    }

    public func sync(_ descriptor: Int32) throws(SystemError) {
        try synchronise(descriptor, operation: "fsync") { () throws(SystemError) in try base.sync(descriptor) }
    }

    /// Makes every `fdatasync` and `fsync` from now on wait until ``releaseSyncs()``.
    public func holdSyncs() {
        gate.condition.lock()
        gate.holding = true
        gate.condition.unlock()
    }

    /// Lets the held syncs, and every later one, go on.
    public func releaseSyncs() {
        gate.condition.lock()
        gate.holding = false
        gate.condition.broadcast()
        gate.condition.unlock()
    }

    /// Waits until `count` syncs are held, or `timeout` passes; whether they are.
    public func waitUntilSyncsHeld(_ count: Int = 1, timeout: Duration = .seconds(10)) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout.inSeconds)
        gate.condition.lock()
        defer { gate.condition.unlock() }
        while gate.waiting < count {
            if !gate.condition.wait(until: deadline) { return gate.waiting >= count }
        }
        return true
    }

    private func synchronise(
        _ descriptor: Int32, operation: String, _ call: () throws(SystemError) -> Void
    ) throws(SystemError) {
        gate.condition.lock()
        if gate.holding {
            gate.waiting += 1
            gate.condition.broadcast()
            while gate.holding { gate.condition.wait() }
            gate.waiting -= 1
        }
        gate.condition.unlock()
        state.withLock { state in
            if state.failedSyncs.contains(descriptor) { state.retriedSyncs += 1 }
        }
        let decision = decide(Self.changing.union([.failedSync]), operation: operation, path: name(descriptor))
        if case .fail = decision, state.withLock({ $0.plan?.fault == .failedSync }) {
            state.withLock { _ = $0.failedSyncs.insert(descriptor) }
        }
        try perform(decision, call)
    }

    public func truncate(_ descriptor: Int32, to size: Int64) throws(SystemError) {
        let decision = decide(Self.changing, operation: "ftruncate", path: name(descriptor))
        try perform(decision) { () throws(SystemError) in try base.truncate(descriptor, to: size) }
    }

    public func size(of descriptor: Int32) throws(SystemError) -> Int64 {
        try base.size(of: descriptor)
    }

    public func setMode(_ descriptor: Int32, _ mode: mode_t) throws(SystemError) {
        let decision = decide(Self.changing, operation: "fchmod", path: name(descriptor))
        try perform(decision) { () throws(SystemError) in try base.setMode(descriptor, mode) }
    }

    public func rename(_ from: String, to: String) throws(SystemError) {
        let decision = decide(Self.changing, operation: "rename", path: from)
        try perform(decision) { () throws(SystemError) in try base.rename(from, to: to) }
    }

    public func remove(_ path: String) throws(SystemError) {
        let decision = decide(Self.changing, operation: "unlink", path: path)
        try perform(decision) { () throws(SystemError) in try base.remove(path) }
    }

    public func makeDirectory(_ path: String, mode: mode_t) throws(SystemError) {
        let decision = decide(Self.changing, operation: "mkdir", path: path)
        try perform(decision) { () throws(SystemError) in
            if state.withLock({ $0.full }) { throw SystemError(ENOSPC) }
            try base.makeDirectory(path, mode: mode)
        }
    }

    public func setMode(path: String, _ mode: mode_t) throws(SystemError) {
        let decision = decide(Self.changing, operation: "chmod", path: path)
        try perform(decision) { () throws(SystemError) in try base.setMode(path: path, mode) }
    }

    public func list(_ directory: String) throws(SystemError) -> [String] {
        try base.list(directory)
    }

    public func lockExclusively(_ descriptor: Int32) throws(SystemError) {
        try base.lockExclusively(descriptor)
    }

    public func unlock(_ descriptor: Int32) {
        base.unlock(descriptor)
    }

    public func exists(_ path: String) -> Bool {
        base.exists(path)
    }
}
