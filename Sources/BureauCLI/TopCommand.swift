import ArgumentParser
import Foundation
import Guards

/// `bureau top`: the deployment's health, refreshed every second.
struct TopCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "top",
        abstract: "Watch every process and consumer live, trouble on top, refreshed every second.",
        discussion: HelpText.prose(
            """
            The screen of `bureau status`, drawn again every second until Ctrl-C (or, with
            --iterations N, N times, then it exits): the bus's figures, then a row per process
            and consumer, sorted so that a process down, a consumer behind, silent or of unknown
            progress, and a process with a recent error come first. Not on a terminal (piped,
            or --iterations 1 in a script), the screens are printed one after another, each
            followed by an empty line. Works against a bus on another machine with --bus and its
            keys, as other commands do.
            """)
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var connection: BusConnectionOptions
    @Option(
        help:
            "A consumer further behind than this many seconds, or silent for longer, is trouble, 1 to 86400. (default: 30)",
        transform: BoundedNumber.integers(in: 1...86_400))
    var maxLagS = 30
    @Option(
        help: "Stop after this many screens, 1 to 1000000 (default: until Ctrl-C).",
        transform: BoundedNumber.integers(in: 1...1_000_000))
    var iterations: Int?

    func run() async throws {
        let client = try connection.client(process: "top", global: global, upcasting: try Composition.upcasting())
        defer { client.close() }
        let probe = HealthProbe(client: client, location: global.location, local: try connection.remote() == nil)
        // The first screen shows every process the log names (or says the list is incomplete);
        // the follower then goes on from where this read stopped.
        _ = await probe.readSystemEvents(timeout: .seconds(5))
        let follower = Task { await probe.followSystemEvents() }
        defer { follower.cancel() }
        let interactive = isatty(STDOUT_FILENO) == 1
        var screens = 0
        while !Task.isCancelled {
            let started = ContinuousClock.now
            let health = await probe.health(maxLagSeconds: Double(maxLagS))
            let width = interactive ? Self.terminalWidth() : 200
            // Home and clear, then the screen: on a terminal it is redrawn in place.
            if interactive { Swift.print("\u{1B}[H\u{1B}[2J", terminator: "") }
            print(health.render(width: width))
            if !interactive { print("") }
            screens += 1
            if let iterations, screens >= iterations { return }
            // Periodic redraw, once a second.
            try? await Task.sleep(until: started + .seconds(1))
        }
    }

    static func terminalWidth() -> Int {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 160 }
        return Int(size.ws_col)
    }
}
