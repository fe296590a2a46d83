extension Supervisor {
    /// Where a process is in its life, as `bureau ps` shows it.
    public enum State: String, Sendable, Codable {
        case pending, starting, ready, restarting, stopping, stopped, exited
        case crashLooping = "crash-looping"
        case failed
        /// A bus on another machine that stopped answering.
        case unreachable

        init(_ phase: ProcessLifecycle.Phase) {
            switch phase {
            case .pending: self = .pending
            case .launching, .starting: self = .starting
            case .ready: self = .ready
            case .replanning, .restarting: self = .restarting
            case .stopping: self = .stopping
            case .stopped: self = .stopped
            case .exited: self = .exited
            case .crashLooping: self = .crashLooping
            case .failed: self = .failed
            }
        }
    }

    /// One row of `bureau ps`.
    public struct Row: Sendable, Codable, Equatable {
        public var name: String
        /// The latest child's, kept after it exits; 0 before the first.
        public var pid: Int32
        public var state: State
        public var restarts: Int
        /// How long the current child has run, while it is starting or ready.
        public var uptimeSeconds: Double?
        public var log: String
        /// How its latest child ended, "exit code 1" or "signal SIGKILL (9)"; nil before one ended.
        public var lastExit: String?

        init(
            name: String, pid: Int32, state: State, restarts: Int, uptimeSeconds: Double?, log: String,
            lastExit: String? = nil
        ) {
            self.name = name
            self.pid = pid
            self.state = state
            self.restarts = restarts
            self.uptimeSeconds = uptimeSeconds
            self.log = log
            self.lastExit = lastExit
        }

        init(_ process: ProcessLifecycle, now: ContinuousClock.Instant) {
            let state = State(process.phase)
            name = process.name
            pid = process.lastPid
            self.state = state
            restarts = process.restarts
            uptimeSeconds =
                state == .starting || state == .ready ? process.startedAt.map { (now - $0).inSeconds } : nil
            log = process.logPath
            lastExit = process.lastExit?.description
        }
    }
}
