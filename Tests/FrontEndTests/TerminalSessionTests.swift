import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A tmux server on a private socket, driven like a person at a terminal.
final class Tmux: @unchecked Sendable {
    let socket: String
    let directory: String
    private var commands = 0

    init(directory: String) {
        socket = "bureau-tui-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        self.directory = directory
    }

    static var executable: String? {
        ["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"].first { access($0, X_OK) == 0 }
    }

    /// What a test skipped for want of tmux says.
    static let missing: Comment = "tmux is not installed (in /usr/bin, /usr/local/bin or /bin): apt-get install tmux"

    /// Runs a tmux command against this server and returns its standard output.
    @discardableResult
    func run(_ arguments: [String]) async throws -> String {
        guard let executable = Self.executable else { throw TestSupportError("tmux is not installed") }
        commands += 1
        let child = try ChildProcess(
            executable, ["-L", socket] + arguments, directory: directory, name: "tmux\(commands)")
        let code = await child.exitCode()
        defer {
            unlink(child.stdoutPath)
            unlink(child.stderrPath)
        }
        guard code == 0 else { throw TestSupportError("tmux \(arguments) exited \(code): \(child.standardError)") }
        return child.standardOutput
    }

    func capture() async throws -> String {
        try await run(["capture-pane", "-p", "-t", "tui"])
    }

    /// Polls the pane until `predicate` holds, up to `timeout`; returns the last capture.
    @discardableResult
    func waitFor(
        _ what: String, timeout: Duration = .seconds(20), sourceLocation: SourceLocation = #_sourceLocation,
        _ predicate: (String) -> Bool
    ) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        var screen = ""
        while ContinuousClock.now < deadline {
            screen = try await capture()
            if predicate(screen) { return screen }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("timed out waiting for \(what); the pane shows:\n\(screen)", sourceLocation: sourceLocation)
        throw TestSupportError("timed out waiting for \(what)")
    }

    @discardableResult
    func waitFor(
        _ text: String, timeout: Duration = .seconds(20), sourceLocation: SourceLocation = #_sourceLocation
    )
        async throws -> String
    {
        try await waitFor("“\(text)”", timeout: timeout, sourceLocation: sourceLocation) { $0.contains(text) }
    }

    func type(_ text: String) async throws {
        try await run(["send-keys", "-t", "tui", "-l", text])
    }

    func press(_ key: String) async throws {
        try await run(["send-keys", "-t", "tui", key])
    }

    /// Waits for the shell prompt, then checks the pane left the alternate screen and the
    /// terminal is in canonical mode with echo.
    func expectTerminalRestored(after what: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await waitFor("the shell prompt after \(what)", sourceLocation: sourceLocation) {
            $0.split(separator: "\n").last?.hasPrefix("tui-test$") == true
        }
        let alternate = try await run(["display", "-p", "-t", "tui", "#{alternate_on}"])
        #expect(alternate.trimmingCharacters(in: .whitespacesAndNewlines) == "0", sourceLocation: sourceLocation)
        try await type("clear; stty -a | tr ' ' '\\n' | grep -E '^-?(icanon|echo)$' | tr '\\n' ' '; echo")
        try await press("Enter")
        let modes = try await waitFor("icanon echo", sourceLocation: sourceLocation)
        #expect(!modes.contains("-icanon"), sourceLocation: sourceLocation)
    }

    /// Opens the session `tui`, 120×36, on a shell whose prompt is `tui-test$ `; notes its pids
    /// and returns once the prompt shows.
    func openShell() async throws {
        try await run([
            "new-session", "-d", "-s", "tui", "-x", "120", "-y", "36", "env PS1='tui-test$ ' TERM=xterm-256color sh",
        ])
        try await notePids()
        try await waitFor("tui-test$")
    }

    /// The server's and the shell's pids, read once the session exists.
    private var pids: [pid_t] = []

    /// Notes the server's and the pane's pids, so that ``kill()`` can end them for certain.
    func notePids() async throws {
        let server = try await run(["display", "-p", "-t", "tui", "#{pid} #{pane_pid}"])
        pids = server.split(whereSeparator: \.isWhitespace).compactMap { pid_t($0) }
    }

    /// Ends this server and its shell. kill-server alone is not enough: a server spawned from a
    /// test thread inherits a mask that blocks SIGTERM, which kill-server relies on.
    func kill() async {
        _ = try? await run(["kill-server"])
        for pid in pids.reversed() { Glibc.kill(pid, SIGKILL) }
    }
}

/// `bureau tui` in a real terminal (tmux) against a whole deployment the test starts itself.
@Suite(.timeLimit(.minutes(3)))
struct TerminalSessionTests {
    @Test(.enabled(if: Tmux.executable != nil, Tmux.missing))
    func aPersonAddsAPairSetsAnAmountReservesAndCancelsThenTheTerminalIsRestored() async throws {
        let directory = try TemporaryDirectory("tui")
        let bus = BusProcess(directory: directory.path)
        try await bus.start()
        let data = bus.location.dataDirectory
        let bureau = BureauExecutable.path
        func start(_ name: String, _ arguments: [String]) async throws -> (ChildProcess, String) {
            let child = try ChildProcess(bureau, arguments, directory: directory.path, name: name, readiness: true)
            let detail = try await child.waitUntilReady()
            return (child, detail)
        }
        let (reducers, _) = try await start(
            "reducers", ["run", "watchlist", "converter", "reservations", "alerts", "--data", data])
        let (ratesServer, ratesURL) = try await start("rates-server", ["serve", "rates", "--port", "0", "--pace", "0"])
        let (bookingServer, bookingURL) = try await start("booking-server", ["serve", "booking", "--port", "0"])
        let (ratesAdapter, _) = try await start(
            "rates-adapter",
            [
                "run", "rates-adapter", "--data", data, "--set",
                "rates-url=\(ratesURL)/stats/eurofxref/eurofxref-daily.xml",
            ])
        let (bookingAdapter, _) = try await start(
            "booking-adapter", ["run", "booking-adapter", "--data", data, "--set", "booking-url=\(bookingURL)"])
        let children = [reducers, ratesServer, bookingServer, ratesAdapter, bookingAdapter]
        let tmux = Tmux(directory: directory.path)
        defer {
            for child in children { child.signal(SIGKILL) }
            bus.process?.signal(SIGKILL)
        }
        do {
            try await tmux.openShell()
            try await tmux.type("\(bureau) tui --data \(data)")
            try await tmux.press("Enter")
            try await tmux.waitFor("the rates and a live bus") {
                $0.contains("● connected") && $0.contains("rates.RatesPublished")
            }

            // The window shrinks (SIGWINCH): the screen is laid out again for 100×30, the status
            // line on the new last row; then back to 120×36.
            func statusRow(_ screen: String) -> Int? {
                screen.split(separator: "\n", omittingEmptySubsequences: false).firstIndex {
                    $0.contains("● connected")
                }
            }
            try await tmux.run(["resize-window", "-t", "tui", "-x", "100", "-y", "30"])
            let small = try await tmux.waitFor("the status line on row 30 of 30") { statusRow($0) == 29 }
            #expect(small.split(separator: "\n").allSatisfy { $0.count <= 100 })
            try await tmux.run(["resize-window", "-t", "tui", "-x", "120", "-y", "36"])
            try await tmux.waitFor("the status line on row 36 of 36") { statusRow($0) == 35 }

            // Add EUR/USD through the picker: base, then quote, typing to filter.
            try await tmux.type("a")
            try await tmux.waitFor("Watch a pair: base currency")
            try await tmux.type("EUR")
            try await tmux.press("Enter")
            try await tmux.waitFor("Watch a pair: EUR/… quote currency")
            try await tmux.type("USD")
            try await tmux.press("Enter")
            let added = try await tmux.waitFor("✓ watchlist/add?base=EUR&quote=USD: PairAdded")
            #expect(added.contains("EUR/USD"))

            // Set the converter's amount.
            try await tmux.type("m")
            try await tmux.waitFor("Converter amount")
            try await tmux.type("250")
            try await tmux.press("Enter")
            let amount = try await tmux.waitFor("250.00 EUR →")
            #expect(amount.contains("✓ converter/amount?value=250&currency=EUR: AmountChanged"))

            // Reserve 500 EUR of the selected pair at the quote shown; the booking confirms it.
            try await tmux.type("r")
            try await tmux.waitFor("Reserve EUR/USD")
            try await tmux.type("500")
            try await tmux.waitFor("you receive")
            try await tmux.press("Enter")
            try await tmux.waitFor("✓ reservations/reserve?base=EUR&quote=USD&amount=500")
            try await tmux.type("2")
            try await tmux.waitFor("✓ confirmed")

            // Cancel it.
            try await tmux.type("c")
            let cancelled = try await tmux.waitFor("– cancelled")
            #expect(cancelled.contains("✓ reservations/cancel?id="))

            // The bus goes away: the screen says so and keeps what it had; when the bus is back it
            // reconnects and follows new events.
            await bus.stop()
            let down = try await tmux.waitFor("○ bus down")
            #expect(down.contains("EUR/USD") && down.contains("– cancelled"))
            try await bus.start()
            try await tmux.waitFor("● connected")
            let sent = try await bus.run(["send", "bureau://watchlist/add?base=GBP&quote=CHF"])
            #expect(sent.code == 0, "\(sent.err)")
            try await tmux.type("1")
            try await tmux.waitFor("GBP/CHF")

            // Quit: the shell is back, out of the alternate screen, in canonical mode with echo.
            try await tmux.type("q")
            try await tmux.expectTerminalRestored(after: "quitting")

            // Again, ended by SIGTERM, and once more crashing (SIGABRT, as a failed precondition
            // would): the terminal is restored all the same.
            let pidFile = directory.file("tui.pid")
            var previous: pid_t?
            for (signal, how) in [(SIGTERM, "SIGTERM"), (SIGABRT, "a crash")] {
                try await tmux.type(
                    "clear; ulimit -c 0; sh -c 'echo $$ > \(pidFile); exec \(bureau) tui --data \(data)'")
                try await tmux.press("Enter")
                try await tmux.waitFor("● connected")
                let pid = try #require(
                    Files.read(pidFile).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
                #expect(pid != previous, "a new front-end")
                previous = pid
                kill(pid, signal)
                try await tmux.expectTerminalRestored(after: how)
            }
        } catch {
            await tmux.kill()
            throw error
        }
        await tmux.kill()
    }
}
