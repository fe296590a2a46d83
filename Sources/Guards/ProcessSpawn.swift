#if canImport(Glibc)
    import Glibc
#endif

/// One `posix_spawn`, described as a value: the program and its arguments, what its environment
/// adds to this process's, what its file descriptors are, and how its signals start.
///
/// The one place a process is started (CONTRIBUTING.md, "One of each"): `bureau up`'s children
/// (`ProcessLauncher`), the tests' children (`ChildProcess`) and the commands a test's setup
/// runs (`SystemCommand`). It builds argv and envp, sets up the file actions and attributes,
/// and turns a failure into an error naming the program.
public struct ProcessSpawn: Sendable {
    /// What one of the child's file descriptors is, set up in order before its program runs.
    public enum FileAction: Sendable, Equatable {
        /// The child's `descriptor` is `path` opened with `flags` (and `mode`, for a file it creates).
        case open(_ descriptor: Int32, path: String, flags: Int32, mode: mode_t = 0)
        /// The child's `descriptor` is a copy of this process's `source`, without its
        /// close-on-exec flag.
        case duplicate(_ source: Int32, to: Int32)
        /// The child's `descriptor` is closed.
        case close(_ descriptor: Int32)

        /// The child's descriptor the action sets up.
        var descriptor: Int32 {
            switch self {
            case .open(let descriptor, _, _, _), .duplicate(_, let descriptor), .close(let descriptor): descriptor
            }
        }
    }

    /// The program's path (no search of `PATH`); also the child's `argv[0]`.
    public var executable: String
    /// The arguments after `argv[0]`.
    public var arguments: [String]
    /// Variables set on top of this process's environment; empty: the child gets this
    /// process's environment as it is.
    public var environment: [String: String] = [:]
    public var fileActions: [FileAction] = []
    /// nil: the child inherits this process's signal mask and ignored signals. Else these
    /// signals start at their default action in the child, and its mask starts empty, whatever
    /// this process ignores, handles or blocks.
    public var defaultSignals: [Int32]?
    /// Whether the child leads a process group of its own, so that a Ctrl-C at the terminal
    /// reaches this process only.
    public var ownProcessGroup = false

    public init(executable: String, arguments: [String]) {
        self.executable = executable
        self.arguments = arguments
    }

    /// Why a process could not be started, naming it.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String

        public init(description: String) { self.description = description }
    }

    /// Starts the child; returns its pid. The caller waits for it (`ExitStatus.waitFor(child:)`).
    public func spawn() throws(Failure) -> pid_t {
        // The child applies the actions in order, so a source that is also a descriptor the
        // actions set up would be overwritten before it is copied (a supervisor whose lifeline
        // was fd 3 gave its children the readiness pipe's write end as their lifeline, which
        // they read, failed to, and took for the supervisor's death), or, copied onto itself,
        // keep its close-on-exec flag. Such a source is copied first, above every descriptor
        // the actions set up; the close below ends the copy in the child.
        let targets = Set(fileActions.map(\.descriptor))
        let highest = max(2, targets.max() ?? 2)
        var copies: [Int32] = []
        defer { for copy in copies { close(copy) } }
        var resolved: [FileAction] = []
        for action in fileActions {
            guard case .duplicate(let source, let target) = action, targets.contains(source) else {
                resolved.append(action)
                continue
            }
            let copy = fcntl(source, F_DUPFD_CLOEXEC, highest + 1)
            guard copy >= 0 else { throw failure("copy descriptor \(source) out of the way", errno) }
            copies.append(copy)
            resolved.append(.duplicate(copy, to: target))
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for action in resolved {
            let result: Int32
            switch action {
            case .open(let descriptor, let path, let flags, let mode):
                result = posix_spawn_file_actions_addopen(&actions, descriptor, path, flags, mode)
            case .duplicate(let source, let target):
                result = posix_spawn_file_actions_adddup2(&actions, source, target)
            case .close(let descriptor):
                result = posix_spawn_file_actions_addclose(&actions, descriptor)
            }
            guard result == 0 else { throw failure("\(action)", result) }
        }
        // The child gets the descriptors set up above and no other: one this process left
        // inheritable (Foundation's pipes are, as are any opened without O_CLOEXEC) would stay
        // open for the child's whole life. A server a test started kept a pipe's write end so,
        // and the promtool reading that pipe waited for its end for ever.
        if let addCloseFrom = Self.addCloseFrom {
            let first = highest + 1
            let result = addCloseFrom(&actions, first)
            guard result == 0 else { throw failure("close from \(first)", result) }
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var flags: Int32 = 0
        if let defaultSignals {
            var defaults = sigset_t()
            sigemptyset(&defaults)
            for signal in defaultSignals { sigaddset(&defaults, signal) }
            posix_spawnattr_setsigdefault(&attributes, &defaults)
            var mask = sigset_t()
            sigemptyset(&mask)
            posix_spawnattr_setsigmask(&attributes, &mask)
            flags |= Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        }
        if ownProcessGroup {
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let result: Int32
        if environment.isEmpty {
            result = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        } else {
            var merged = Self.currentEnvironment
            for (key, value) in environment { merged[key] = value }
            let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { for pointer in envp { free(pointer) } }
            result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        }
        guard result == 0 else { throw Failure(description: "could not start \(executable): \(Self.text(result))") }
        return pid
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), found at run time:
    /// Swift's Glibc module leaves GNU extensions out. nil with an older C library, whose
    /// children then inherit what this process left inheritable.
    private static let addCloseFrom:
        (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
            guard let handle = dlopen(nil, RTLD_NOW),
                let symbol = dlsym(handle, "posix_spawn_file_actions_addclosefrom_np")
            else { return nil }
            return unsafeBitCast(
                symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
        }()

    /// A pipe whose ends are closed on exec, so that no other child (started meanwhile on
    /// another thread, or left running by a command) holds them open; a ``FileAction/duplicate(_:to:)``
    /// gives a child its copy.
    public static func pipe() throws(Failure) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard Glibc.pipe(&ends) == 0 else { throw Failure(description: "could not make a pipe: \(text(errno))") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return (ends[0], ends[1])
    }

    /// This process's environment, as `environ` holds it now.
    public static var currentEnvironment: [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }

    private func failure(_ what: String, _ code: Int32) -> Failure {
        Failure(description: "could not start \(executable): \(what): \(Self.text(code))")
    }

    private static func text(_ code: Int32) -> String { String(cString: strerror(code)) }
}
