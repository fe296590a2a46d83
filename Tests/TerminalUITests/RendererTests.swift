import TerminalUI
import Testing

/// The diff renderer writes only what changed; colours follow the terminal's mode.
struct RendererTests {
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func theFirstFrameIsDrawnInFullAndAnUnchangedFrameWritesNothing() {
        var renderer = Renderer(colorMode: .color)
        var frame = CellBuffer(width: 4, height: 2)
        frame.write("ab", x: 0, y: 0)
        let first = Self.text(renderer.render(frame))
        #expect(first.hasPrefix("\u{1B}[0m\u{1B}[2J"))
        #expect(renderer.render(frame).isEmpty)
    }

    @Test func onlyChangedCellsAreWrittenWithACursorMoveToEachRun() {
        var renderer = Renderer(colorMode: .color)
        var frame = CellBuffer(width: 10, height: 3)
        _ = renderer.render(frame)
        frame.write("xy", x: 3, y: 1)
        frame.write("z", x: 9, y: 2)
        #expect(Self.text(renderer.render(frame)) == "\u{1B}[2;4H\u{1B}[0mxy\u{1B}[3;10Hz")
        frame.write("a", x: 0, y: 0)
        frame.write("b", x: 5, y: 0)
        #expect(Self.text(renderer.render(frame)) == "\u{1B}[1;1H\u{1B}[0ma\u{1B}[4Cb")
    }

    @Test func stylesBecomeSGRSequencesOnlyWhenTheyChange() {
        var renderer = Renderer(colorMode: .color)
        var frame = CellBuffer(width: 6, height: 1)
        _ = renderer.render(frame)
        frame.write("▲1", x: 0, y: 0, style: .foreground(.green, bold: true))
        frame.write("x", x: 2, y: 0)
        #expect(Self.text(renderer.render(frame)) == "\u{1B}[1;1H\u{1B}[0;1;32m▲1\u{1B}[0mx")
    }

    @Test func noColorKeepsAttributesAndDumbTerminalsGetNoStyleAtAll() {
        var frame = CellBuffer(width: 3, height: 1)
        frame.write("!", x: 0, y: 0, style: Style(foreground: .red, bold: true))
        let monochrome = Self.text(Renderer.fullRedraw(frame, colorMode: .monochrome))
        #expect(monochrome.contains("\u{1B}[0;1m!"))
        #expect(!monochrome.contains("31"))
        let plain = Self.text(Renderer.fullRedraw(frame, colorMode: .plain))
        #expect(plain == "\u{1B}[0m\u{1B}[2J\u{1B}[1;1H!  ")
    }

    @Test func theModeFollowsNoColorAndTerm() {
        #expect(ColorMode.detect(environment: ["TERM": "xterm-256color"]) == .color)
        #expect(ColorMode.detect(environment: ["TERM": "xterm", "NO_COLOR": "1"]) == .monochrome)
        #expect(ColorMode.detect(environment: ["TERM": "xterm", "NO_COLOR": ""]) == .color)
        #expect(ColorMode.detect(environment: ["TERM": "dumb"]) == .plain)
    }

    @Test func aChangedWideCharacterIsRewrittenWhole() {
        var renderer = Renderer(colorMode: .plain)
        var frame = CellBuffer(width: 4, height: 1)
        frame.write("円", x: 0, y: 0)
        _ = renderer.render(frame)
        frame.write("ab", x: 0, y: 0)
        #expect(Self.text(renderer.render(frame)) == "\u{1B}[1;1Hab")
    }

    @Test func aResizeRedrawsEverything() {
        var renderer = Renderer(colorMode: .plain)
        _ = renderer.render(CellBuffer(width: 4, height: 1))
        #expect(Self.text(renderer.render(CellBuffer(width: 5, height: 1))).hasPrefix("\u{1B}[0m\u{1B}[2J"))
    }

    @Test func theBenchmarkDiffWritesFarLessThanAFullRedraw() {
        let (diff, full) = RendererBenchmark.measure(width: 80, height: 24, frames: 4)
        #expect(diff.bytesPerFrame < full.bytesPerFrame / 2)
    }

    @Test func theBenchmarkReportComparesBothWays() {
        // A few frames: the report's form is what is checked (the benchmark itself is
        // `bureau-bench renderer`; its full count took 2.5 s of the test pool's two threads, and
        // 20 frames still 0.2 s, which every test queued behind it waited).
        let report = RendererBenchmark.run(frames: 2)
        #expect(report.contains("| diff (changed cells only) |"))
        #expect(report.contains("| full redraw |"))
    }
}
