import Bus
import Runtime
import Synchronization
import TerminalUI

/// The time-travel screen: the live screens as they were, and a panel with the event and
/// what it changed.
public struct ReplayView: Component, Sendable {
    public var browser: ReplayBrowser
    static let panelHeight = 9

    public init(browser: ReplayBrowser) {
        self.browser = browser
    }

    public func draw(in buffer: inout CellBuffer, area: Rect) {
        let panel = min(Self.panelHeight, max(area.height - 4, 3))
        let top = Rect(x: area.x, y: area.y, width: area.width, height: area.height - panel)
        RootView(state: browser.state).draw(in: &buffer, area: top)
        let bottom = Rect(x: area.x, y: area.y + top.height, width: area.width, height: panel)
        buffer.fill(bottom)
        let head = browser.events.last?.position ?? 0
        let title = " REPLAY · after \(browser.applied) of \(browser.events.count) events (head \(head)) "
        buffer.box(
            bottom, title: title, footer: " ← → step · PgUp PgDn 100 · Home End · g jump to position or time · q quit ")
        var y = bottom.y + 1
        let inner = Rect(x: bottom.x + 2, y: bottom.y + 1, width: bottom.width - 4, height: bottom.height - 2)
        func line(_ text: String, style: Style = .plain) {
            guard y < inner.y + inner.height else { return }
            buffer.write(text, x: inner.x, y: y, style: style, clip: inner)
            y += 1
        }
        if let prompt = browser.jumpPrompt {
            line("jump to position or time: \(prompt)▏", style: Theme.pending)
        }
        if let problem = browser.problem { line(problem, style: Theme.error) }
        guard let event = browser.current else {
            line("before the first event: ← → to step, g to jump", style: Theme.muted)
            return
        }
        line(event.line)
        if browser.changes.isEmpty { line("changed nothing in any reducer's state or read model", style: Theme.muted) }
        for change in browser.changes {
            for difference in change.differences.prefix(3) {
                line("\(change.owner): \(difference)")
            }
            if change.differences.count > 3 {
                line("\(change.owner): … \(change.differences.count - 3) more", style: Theme.muted)
            }
        }
    }
}
