import Guards
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

    /// What `bureau-bench renderer` measures at 200×60, here on a few small frames: a frame
    /// with a tenth of its cells changed costs the diff far fewer bytes than a full redraw.
    @Test func aFewChangedCellsWriteFarLessThanAFullRedraw() {
        // Given a full 80×24 screen drawn once
        var renderer = Renderer(colorMode: .color)
        var frame = CellBuffer(width: 80, height: 24)
        for y in 0..<24 { frame.write(String(repeating: "x", count: 80), x: 0, y: y) }
        _ = renderer.render(frame)
        // When a tenth of its cells change, scattered
        var generator = Xoshiro256(seed: 7)
        for _ in 0..<(80 * 24 / 10) {
            frame.set(Int(generator.next() % 80), Int(generator.next() % 24), Cell("o", style: .bold))
        }
        // Then the diff writes less than half of what a full redraw does
        let diff = renderer.render(frame).count
        let full = Renderer.fullRedraw(frame, colorMode: .color).count
        #expect(diff > 0 && diff < full / 2, "diff \(diff) bytes, full redraw \(full)")
    }
}
