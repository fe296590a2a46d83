import Guards
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Waiting for a child: with its end read and the child reaped, or left a zombie (its id still
/// its own) until reaped. (`Guards.ExitStatus` in full: Swift Testing has one of its own.)
struct ExitStatusWaitingTests {
    /// Starts `/bin/sh -c script`, its output to /dev/null.
    static func start(_ script: String) throws -> pid_t {
        var spawn = ProcessSpawn(executable: "/bin/sh", arguments: ["-c", script])
        spawn.fileActions = [
            .open(1, path: "/dev/null", flags: O_WRONLY), .open(2, path: "/dev/null", flags: O_WRONLY),
        ]
        return try spawn.spawn()
    }

    /// The state /proc gives for `pid` ("Z" for a zombie), nil once there is no such process.
    static func state(of pid: pid_t) -> String? {
        guard let file = fopen("/proc/\(pid)/stat", "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 512)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return nil }
        let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // "pid (comm) S ...": the state follows the command's closing parenthesis.
        guard let close = line.lastIndex(of: ")") else { return nil }
        return line[line.index(after: close)...].split(separator: " ").first.map(String.init)
    }

    @Test func aChildSeenToEndKeepsItsIdUntilReaped() async throws {
        // Given a child that exits with code 3
        let pid = try Self.start("exit 3")
        // When its end is awaited without reaping it
        let ended = try await OwnThread.run(name: "test-wait") { Guards.ExitStatus.waitForEnd(ofChild: pid) }
        // Then its exit code is read, and it is still a zombie: its id is not free for another process
        #expect(ended == .code(3))
        #expect(Self.state(of: pid) == "Z")
        // When it is reaped, it is gone
        Guards.ExitStatus.reap(pid)
        #expect(Self.state(of: pid) == nil)
    }

    @Test func aChildKilledBySignalIsSaidSoByBothWaits() async throws {
        // Given two children that kill themselves with SIGKILL
        let first = try Self.start("kill -KILL $$")
        let second = try Self.start("kill -KILL $$")
        // When one is awaited without reaping and the other with
        let (unreaped, reaped) = try await OwnThread.run(name: "test-wait") {
            (Guards.ExitStatus.waitForEnd(ofChild: first), Guards.ExitStatus.waitFor(child: second))
        }
        Guards.ExitStatus.reap(first)
        // Then both say the signal
        #expect(unreaped == .signal(SIGKILL))
        #expect(reaped == .signal(SIGKILL))
    }

    @Test func aRunningChildIsNotReportedEndedUntilItEnds() async throws {
        // Given a child that runs until its input closes
        let input = try ProcessSpawn.pipe()
        var spawn = ProcessSpawn(executable: "/bin/sh", arguments: ["-c", "read line; exit 4"])
        spawn.fileActions = [.duplicate(input.read, to: 0), .open(1, path: "/dev/null", flags: O_WRONLY)]
        let pid = try spawn.spawn()
        close(input.read)
        // When it is asked about while it runs, then it has not ended
        #expect(Guards.ExitStatus.ifEnded(child: pid) == nil)
        // When its input closes and it has ended
        close(input.write)
        let seen = try await OwnThread.run(name: "test-wait") { Guards.ExitStatus.waitForEnd(ofChild: pid) }
        // Then asking says how, and reaps it
        #expect(seen == .code(4))
        #expect(Guards.ExitStatus.ifEnded(child: pid) == .code(4))
        #expect(Self.state(of: pid) == nil)
    }

    @Test func aProcessThatIsNotAChildCannotBeWaitedFor() async throws {
        // Given a pid that is not this process's child: init's
        // When it is waited for, either way
        let answers = try await OwnThread.run(name: "test-wait") {
            (Guards.ExitStatus.waitFor(child: 1), Guards.ExitStatus.waitForEnd(ofChild: 1))
        }
        // Then the answer is nil, not a made-up "exit code 0"
        #expect(answers.0 == nil)
        #expect(answers.1 == nil)
    }

    @Test func anUnknownEndIsAFailureAndSaidSo() {
        #expect(!Guards.ExitStatus.unknown.succeeded)
        #expect(Guards.ExitStatus.unknown.text == "ended with an unknown status")
        #expect(Guards.ExitStatus(exitCode: -1, signal: 0) == .unknown, "as ProcessExited carries it")
    }
}
