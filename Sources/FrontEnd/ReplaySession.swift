import Runtime
import TerminalUI

/// `bureau tui --replay` at work: the terminal and a ``ReplayBrowser``; no bus.
public struct ReplaySession: Sendable {
    public let browser: ReplayBrowser
    public let colorMode: ColorMode

    public init(browser: ReplayBrowser, colorMode: ColorMode) {
        self.browser = browser
        self.colorMode = colorMode
    }

    /// Runs until the person quits; the terminal is restored on return, on a quit signal and on a crash.
    public func run() async throws(TerminalError) {
        try await Terminal.withFullScreen(colorMode: colorMode) { terminal, input in
            await browse(terminal, input)
        }
    }

    private func browse(_ terminal: Terminal, _ input: TerminalInput) async {
        var browser = self.browser
        var renderer = Renderer(colorMode: colorMode)
        browser.resize(to: terminal.size)
        func draw() {
            let size = browser.state.size
            terminal.write(
                renderer.render(ReplayView(browser: browser).rendered(width: size.columns, height: size.rows)))
        }
        draw()
        loop: for await event in input.events {
            switch event {
            case .keys(let keys):
                for key in keys where !browser.handle(key) { break loop }
                draw()
            case .resized(let newSize):
                browser.resize(to: newSize)
                renderer.invalidate()
                draw()
            case .closed:
                break loop
            }
        }
    }
}
