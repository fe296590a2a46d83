import TerminalUI

/// The line above the status line: a notice, or the latest request and what became of it.
public struct RequestLine: Component, Sendable {
    public var latest: TrackedRequest?
    public var pending: Int
    public var notice: String?

    public init(latest: TrackedRequest?, pending: Int, notice: String?) {
        self.latest = latest
        self.pending = pending
        self.notice = notice
    }

    public func draw(in buffer: inout CellBuffer, area: Rect) {
        if let notice {
            buffer.write(" ! \(notice)", x: area.x, y: area.y, style: Theme.pending, clip: area)
            return
        }
        guard let latest else {
            buffer.write(" ? keys  : command  q quit", x: area.x, y: area.y, style: Theme.muted, clip: area)
            return
        }
        let (text, style): (String, Style) =
            switch latest.status {
            case .pending: ("⧗ \(latest.label): pending", Theme.pending)
            case .accepted(let fact): ("✓ \(latest.label): \(fact)", Theme.success)
            case .rejected(let reason): ("✗ \(latest.label): rejected: \(reason)", Theme.error)
            case .outcome(true, let fact): ("✓ \(latest.label): \(fact)", Theme.success)
            case .outcome(false, let reason): ("✗ \(latest.label): failed: \(reason)", Theme.error)
            case .failed(let reason): ("✗ \(latest.label): not sent: \(reason)", Theme.error)
            }
        let others = pending - (latest.status == .pending ? 1 : 0)
        buffer.write(
            " " + text + (others > 0 ? "  (+\(others) pending)" : ""), x: area.x, y: area.y, style: style, clip: area)
    }
}
