import Foundation
import TestServers
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `bureau tui --replay` in a real terminal (tmux) on a laptop that has none of the log's
/// files: it reads the log of a bus on another machine through CURVE TCP.
@Suite(.timeLimit(.minutes(3)))
struct RemoteReplayTerminalTests {
    @Test(.enabled(if: Tmux.executable != nil, Tmux.missing))
    func theReplayBrowserReadsARemoteLogThroughTheBus() async throws {
        let directory = try TemporaryDirectory("tui-remote")
        for stem in ["bus", "laptop"] {
            let keygen = try await ChildProcess.bureau(
                ["keygen", directory.file(stem)], in: directory.path, name: stem)
            #expect(keygen.code == 0)
        }
        let port = try TCPPorts.freeTriple()
        let bus = BusProcess(directory: directory.path)
        try await bus.start([
            "--listen", "127.0.0.1:\(port)", "--curve-secret-file", directory.file("bus.key"), "--allow-keys",
            directory.file("laptop.pub"),
        ])
        defer { bus.process?.signal(SIGKILL) }
        for pair in ["EUR/USD", "EUR/JPY", "GBP/CHF"] {
            let parts = pair.split(separator: "/")
            let published = try await bus.run([
                "publish", "--type", "bureau.watchlist.PairAdded", "--json",
                #"{"base":"\#(parts[0])","quote":"\#(parts[1])"}"#,
            ])
            #expect(published.code == 0, "\(published.err)")
        }
        let tmux = Tmux(directory: directory.path)
        do {
            try await tmux.openShell()
            try await tmux.type(
                "\(BureauExecutable.path) tui --replay --bus tcp://127.0.0.1:\(port) --server-key \(directory.file("bus.pub")) "
                    + "--client-key \(directory.file("laptop.key")) --data \(directory.file("laptop"))")
            try await tmux.press("Enter")
            let screen = try await tmux.waitFor("REPLAY · after 3 of 3 events")
            #expect(screen.contains("GBP/CHF"), "\(screen)")
            try await tmux.type("q")
            try await tmux.expectTerminalRestored(after: "quitting the replay")
        } catch {
            await tmux.kill()
            throw error
        }
        await tmux.kill()
        #expect(!FileManager.default.fileExists(atPath: directory.file("laptop/log")), "no log files on the laptop")
    }
}
