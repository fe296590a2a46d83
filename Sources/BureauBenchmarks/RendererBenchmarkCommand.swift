import ArgumentParser
import TerminalUI

/// `bureau-bench renderer`: the front-end's diff renderer against a full redraw, same run.
struct RendererBenchmarkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "renderer",
        abstract: "A 200×60 screen with 10% of its cells changed per frame: diff vs full redraw."
    )

    func run() {
        print(RendererBenchmark.run())
    }
}
