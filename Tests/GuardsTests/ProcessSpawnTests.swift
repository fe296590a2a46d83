import Guards
import Testing

#if canImport(Glibc)
    import Glibc
#endif

struct ProcessSpawnTests {
    /// Reads `descriptor` to its end, then waits for `pid`: what the child wrote, and how it ended.
    static func finish(
        _ pid: pid_t, reading descriptor: Int32
    ) async throws -> (output: String, ended: Guards.ExitStatus) {
        try await OwnThread.run(name: "test-spawn") {
            var output: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                output += buffer[0..<count]
            }
            close(descriptor)
            let ended = try #require(Guards.ExitStatus.waitFor(child: pid))
            return (String(decoding: output, as: UTF8.self), ended)
        }
    }

    @Test func aChildGetsItsArgumentsTheEnvironmentAddedAndTheDescriptorsItWasGiven() async throws {
        // Given a pipe as the child's stdout and stderr, and a variable added to its environment
        let ends = try ProcessSpawn.pipe()
        var spawn = ProcessSpawn(
            executable: "/bin/sh", arguments: ["-c", #"echo "$1 $SPAWN_TEST"; echo oops >&2"#, "sh", "hello"])
        spawn.environment = ["SPAWN_TEST": "world"]
        spawn.fileActions = [
            .open(0, path: "/dev/null", flags: O_RDONLY), .duplicate(ends.write, to: 1), .duplicate(ends.write, to: 2),
        ]
        // When it runs to its end
        let pid = try spawn.spawn()
        close(ends.write)
        let (output, ended) = try await Self.finish(pid, reading: ends.read)
        // Then it wrote both lines through the pipe, and this process's environment was kept
        #expect(output == "hello world\noops\n")
        #expect(ended.succeeded)
        #expect(ProcessSpawn.currentEnvironment["PATH"] != nil)
        #expect(ProcessSpawn.currentEnvironment["SPAWN_TEST"] == nil, "the variable was the child's only")
    }

    /// A descriptor this process left inheritable (Foundation's pipes are) does not reach the
    /// child: a server a test started kept a pipe so, and the promtool reading it never saw its end.
    @Test func aChildGetsNoDescriptorItWasNotGivenEvenAnInheritableOne() async throws {
        // Given a pipe whose ends are inheritable, and a child given only its stdout
        var stray: [Int32] = [-1, -1]
        #expect(pipe(&stray) == 0)
        defer { for end in stray { close(end) } }
        let ends = try ProcessSpawn.pipe()
        let script =
            "for fd in \(stray[0]) \(stray[1]); do [ -e /proc/$$/fd/$fd ] && echo \"$fd open\"; done; echo done"
        var spawn = ProcessSpawn(executable: "/bin/sh", arguments: ["-c", script])
        spawn.fileActions = [.duplicate(ends.write, to: 1)]
        // When it runs
        let pid = try spawn.spawn()
        close(ends.write)
        let (output, ended) = try await Self.finish(pid, reading: ends.read)
        // Then neither end is open in it
        #expect(output == "done\n")
        #expect(ended.succeeded)
    }

    /// The child applies the actions in order. A supervisor whose lifeline happened to be fd 3
    /// put the readiness pipe there first, so its children got that pipe's write end as their
    /// lifeline, failed to read it and stopped as if the supervisor had died (seen twice in
    /// full runs: a bus and a reducer host ended by SIGTERM while starting).
    @Test func aDescriptorAnEarlierActionReplacesIsStillTheOneGiven() async throws {
        // Given a pipe the child reads as its fd 8, whose read end's number in this process is
        // where an earlier action puts another pipe's write end
        let given = try ProcessSpawn.pipe()
        let output = try ProcessSpawn.pipe()
        var spawn = ProcessSpawn(executable: "/bin/sh", arguments: ["-c", #"read line <&8 && echo "got $line""#])
        spawn.fileActions = [
            .duplicate(output.write, to: 1),
            .duplicate(output.write, to: given.read),
            .duplicate(given.read, to: 8),
        ]
        // When it runs and the pipe carries a line
        let pid = try spawn.spawn()
        close(output.write)
        close(given.read)
        let line = Array("hello\n".utf8)
        #expect(write(given.write, line, line.count) == line.count)
        close(given.write)
        let (text, ended) = try await Self.finish(pid, reading: output.read)
        // Then its fd 8 was that pipe, not what the earlier action put at the pipe's number
        #expect(text == "got hello\n")
        #expect(ended.succeeded)
    }

    @Test func signalsThisProcessIgnoresStartAtTheirDefaultWhenAsked() async throws {
        // Given SIGPIPE ignored here, as the supervisor does (left so: a test process wants a write
        // to a closed socket to fail rather than kill it), and a child that reports how it finds it
        signal(SIGPIPE, SIG_IGN)
        let script = #"grep '^SigIgn' /proc/self/status"#
        func ignored(resetting: [Int32]?) async throws -> String {
            let ends = try ProcessSpawn.pipe()
            var spawn = ProcessSpawn(executable: "/bin/sh", arguments: ["-c", script])
            spawn.fileActions = [.duplicate(ends.write, to: 1)]
            spawn.defaultSignals = resetting
            let pid = try spawn.spawn()
            close(ends.write)
            return try await Self.finish(pid, reading: ends.read).output
        }
        // Then a child inherits it unless SIGPIPE is among the signals reset to their default
        let mask = UInt64(1) << UInt64(SIGPIPE - 1)
        func hasSIGPIPE(_ line: String) -> Bool {
            let hex = String(line.drop { $0 != ":" }.dropFirst().filter(\.isHexDigit))
            return (UInt64(hex, radix: 16) ?? 0) & mask != 0
        }
        #expect(hasSIGPIPE(try await ignored(resetting: nil)))
        #expect(!hasSIGPIPE(try await ignored(resetting: [SIGPIPE])))
    }

    @Test func aProgramThatCannotStartIsNamedWithTheReason() {
        let spawn = ProcessSpawn(executable: "/nonexistent/bureau", arguments: [])
        #expect(
            throws: ProcessSpawn.Failure(description: "could not start /nonexistent/bureau: No such file or directory")
        ) {
            try spawn.spawn()
        }
    }
}
