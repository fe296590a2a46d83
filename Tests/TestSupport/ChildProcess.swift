import Guards
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A process a test started, with its output in files; killed when released if still running.
///
/// Tests end only processes they started, by pid.
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    public let stdoutPath: String
    public let stderrPath: String
    /// The write end of the child's standard input pipe, held open while this object lives.
    private let inputWriteEnd: Int32?
    /// How the child ended, shared with the thread that waits for it (which holds this, not the
    /// process object, so that releasing the object ends the child).
    private let exit = Exit()

    /// The read end of the readiness pipe, when the child was given `--ready-fd 3`, until
    /// ``waitUntilReady(timeout:)`` takes it (its reading thread closes it when done).
    private let readiness: Mutex<Int32?>

    /// Starts `executable` with `arguments`, stdout and stderr to files in `directory`.
    ///
    /// With `readiness`, the child gets the write end of a pipe as file descriptor 3 and
    /// `--ready-fd 3` is appended to its arguments; ``waitUntilReady(timeout:)`` awaits it. With
    /// `openInput`, its standard input is a pipe that stays open while this object lives (else
    /// /dev/null): for a program that must not see its input end, such as `script` around the
    /// front-end, which would pass the end on to it as a terminal's EOF.
    public init(
        _ executable: String, _ arguments: [String], directory: String, name: String = "child",
        environment: [String: String] = [:], readiness: Bool = false, openInput: Bool = false
    ) throws {
        stdoutPath = directory + "/\(name).out"
        stderrPath = directory + "/\(name).err"
        var spawn = ProcessSpawn(executable: executable, arguments: arguments)
        spawn.environment = environment
        spawn.fileActions = [
            .open(0, path: "/dev/null", flags: O_RDONLY),
            .open(1, path: stdoutPath, flags: O_WRONLY | O_CREAT | O_APPEND, mode: 0o644),
            .open(2, path: stderrPath, flags: O_WRONLY | O_CREAT | O_APPEND, mode: 0o644),
        ]
        var input: (read: Int32, write: Int32)?
        if openInput {
            let pipe = try ProcessSpawn.pipe()
            spawn.fileActions[0] = .duplicate(pipe.read, to: 0)
            input = pipe
        }
        defer { if let input { close(input.read) } }
        var ends: (read: Int32, write: Int32)?
        if readiness {
            let pipe = try ProcessSpawn.pipe()
            spawn.fileActions.append(.duplicate(pipe.write, to: 3))
            spawn.arguments += ["--ready-fd", "3"]
            ends = pipe
        }
        defer { if let ends { close(ends.write) } }
        do {
            pid = try spawn.spawn()
        } catch {
            if let ends { close(ends.read) }
            if let input { close(input.write) }
            throw error
        }
        inputWriteEnd = input?.write
        self.readiness = Mutex(ends?.read)
        do {
            try Self.startWaiter(for: pid, exit: exit)
        } catch {
            // No thread to reap it: ended and reaped here.
            kill(pid, SIGKILL)
            exit.record(ExitStatus.waitForEnd(ofChild: pid) ?? .unknown, reaping: pid)
            throw error
        }
    }

    /// Waits until the child writes READY on its readiness pipe and returns what followed READY
    /// on that line (a server's URL, say); throws if it exits first or `timeout` passes.
    @discardableResult
    public func waitUntilReady(timeout: Duration = .seconds(60)) async throws -> String {
        guard let fd = readiness.withLock({ $0.take() }) else {
            throw TestSupportError("the child was started without a readiness pipe, or it was waited on already")
        }
        // The pipe is read on a thread of its own: a read that blocks on the cooperative pool
        // holds one of its two threads from every other test. It ends when the child writes its
        // line or exits (the pipe's last write end closes), and closes the pipe then, even if
        // this has stopped waiting.
        let ready: String?? = try await Timeout.result(within: timeout) {
            try await OwnThread.run(name: "bureau-ready") {
                defer { close(fd) }
                return Self.readinessLine(fd)
            }
        }
        switch ready {
        case .some(.some(let detail)): return detail
        case .some(.none):
            throw TestSupportError("the process exited before it was ready: \(standardError.suffix(2000))")
        case nil: throw TestSupportError("the process was not ready within \(timeout): \(standardError.suffix(2000))")
        }
    }

    /// What follows READY on the line the child writes to its readiness pipe ("" for none); nil
    /// if the pipe closed first (the child exited).
    private static func readinessLine(_ fd: Int32) -> String? {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count < 4096 {
            let count = read(fd, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1 else { break }
            if byte == UInt8(ascii: "\n") { break }
            line.append(byte)
        }
        guard !line.isEmpty else { return nil }
        let text = String(decoding: line, as: UTF8.self)
        return text.hasPrefix("READY ") ? String(text.dropFirst(6)) : ""
    }

    /// How the child ended, once it has, and who waits to hear it.
    private final class Exit: Sendable {
        private let state = Mutex<(status: ExitStatus?, waiters: [@Sendable (ExitStatus) -> Void])>((nil, []))

        var status: ExitStatus? { state.withLock { $0.status } }

        /// Records how `pid` ended and reaps it, both under the lock ``signal(_:to:)`` takes:
        /// a signal is sent only while the id is still the child's.
        func record(_ status: ExitStatus, reaping pid: pid_t) {
            let waiters = state.withLock { state in
                state.status = status
                ExitStatus.reap(pid)
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter(status) }
        }

        /// Sends `signal` to `pid` unless it has ended (a zombie still holds its id until
        /// ``record(_:reaping:)``, so this never reaches a process that reused the id).
        func signal(_ signal: Int32, to pid: pid_t) {
            state.withLock { state in
                if state.status == nil { kill(pid, signal) }
            }
        }

        /// Calls `body` with how the process ended when it ends (at once if it has).
        func onExit(_ body: @escaping @Sendable (ExitStatus) -> Void) {
            let known = state.withLock { state -> ExitStatus? in
                if state.status == nil { state.waiters.append(body) }
                return state.status
            }
            if let known { body(known) }
        }
    }

    /// Blocks a thread of its own in waitid so that ``exitStatus()`` can be awaited without
    /// polling; it reaps the child whenever it ends, whether or not anyone still holds it.
    private static func startWaiter(for pid: pid_t, exit: Exit) throws {
        try OwnThread.detached(name: "bureau-waitpid") {
            // Not our child (ECHILD) cannot happen for a pid just spawned.
            exit.record(ExitStatus.waitForEnd(ofChild: pid) ?? .unknown, reaping: pid)
        }
    }

    public func signal(_ signal: Int32) {
        exit.signal(signal, to: pid)
    }

    public var isRunning: Bool { exit.status == nil }

    /// How the process ended, once it has.
    public func exitStatus() async -> ExitStatus {
        let exit = exit
        return await withCheckedContinuation { continuation in
            exit.onExit { continuation.resume(returning: $0) }
        }
    }

    /// The exit code, or 128 + the signal that ended it, as a shell says it.
    public func exitCode() async -> Int32 {
        let status = await exitStatus()
        return status.signal == 0 ? status.exitCode : 128 + status.signal
    }

    /// Waits up to `timeout` for the process to end; nil if it is still running then.
    public func exitCode(within timeout: Duration) async -> Int32? {
        await Timeout.result(within: timeout) { await self.exitCode() }
    }

    /// Returns once the process has written `text` to stdout or stderr; throws if it exits
    /// first or `timeout` passes. For what a process only says in its log (a retry it makes),
    /// which nothing else announces; it reads the files every 50 ms.
    public func waitForOutput(_ text: String, timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if standardError.contains(text) || standardOutput.contains(text) { return }
            guard isRunning else {
                throw TestSupportError("the process exited before it said '\(text)': \(standardError)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestSupportError("the process did not say '\(text)' within \(timeout): \(standardError)")
    }

    public var standardOutput: String { Files.read(stdoutPath) ?? "" }
    public var standardError: String { Files.read(stderrPath) ?? "" }

    /// Runs `bureau ARGUMENTS` in `directory` to its end (killed after `timeout`: code nil);
    /// returns its exit code and output, and removes its output files, so that the next run of
    /// the same name starts afresh.
    public static func bureau(
        _ arguments: [String], in directory: String, name: String, environment: [String: String] = [:],
        timeout: Duration = .seconds(120)
    ) async throws -> (code: Int32?, out: String, err: String) {
        let child = try ChildProcess(
            BureauExecutable.path, arguments, directory: directory, name: name, environment: environment)
        let code = await child.exitCode(within: timeout)
        if code == nil { child.signal(SIGKILL) }
        defer {
            unlink(child.stdoutPath)
            unlink(child.stderrPath)
        }
        return (code, child.standardOutput, child.standardError)
    }

    deinit {
        // Reaped by the waiter thread.
        exit.signal(SIGKILL, to: pid)
        if let fd = readiness.withLock({ $0 }) { close(fd) }
        if let inputWriteEnd { close(inputWriteEnd) }
    }
}

/// The `bureau` executable built beside the test bundle.
public enum BureauExecutable {
    /// `bureau`, as built beside the tests.
    public static var path: String { built("bureau") }

    /// `bureau-faults`: `bureau bus` with a fault plan (`BUREAU_FAULT`), built for the tests only.
    public static var faults: String { built("bureau-faults") }

    private static func built(_ name: String) -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let exe = String(decoding: buffer.prefix(max(0, count)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var directory = exe
        // The test binary is <build>/<Package>PackageTests.xctest; the executables sit beside it.
        while !directory.isEmpty {
            directory = String(directory[..<(directory.lastIndex(of: "/") ?? directory.startIndex)])
            if access(directory + "/" + name, X_OK) == 0 { return directory + "/" + name }
        }
        return name
    }
}
