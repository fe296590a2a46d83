import Runtime
import SystemFeature
import TerminalUI

/// The bottom line: connected or not, the head position, the events the screens could not read
/// (if any), and the latest error.
public struct StatusLine: Component, Sendable {
    public var connection: Connection
    public var latestError: ErrorsProjection.Row?
    public var passedOver: PassedOver

    public init(connection: Connection, latestError: ErrorsProjection.Row?, passedOver: PassedOver = PassedOver()) {
        self.connection = connection
        self.latestError = latestError
        self.passedOver = passedOver
    }

    public func draw(in buffer: inout CellBuffer, area: Rect) {
        let y = area.y
        var x: Int
        if let stopped = connection.stopped {
            x = buffer.write(" ■ stopped: \(stopped) ", x: area.x, y: y, style: Theme.disconnected, clip: area)
        } else if connection.isConnected {
            x = buffer.write(" ● connected ", x: area.x, y: y, style: Theme.connected, clip: area)
            let progress = connection.caughtUp ? "head \(connection.head)" : "catching up… head \(connection.head)"
            x = buffer.write("│ \(progress) ", x: x, y: y, clip: area)
        } else {
            let why = connection.problem.map { " (\($0))" } ?? ""
            x = buffer.write(
                " ○ bus down\(why): showing what was received, reconnecting… ", x: area.x, y: y,
                style: Theme.disconnected, clip: area)
            x = buffer.write(" │ last head \(connection.head) ", x: x, y: y, clip: area)
        }
        if let first = passedOver.first.first {
            let count = passedOver.count
            x = buffer.write(
                "│ ✗ \(count) event\(count == 1 ? "" : "s") not shown, unreadable: @\(first.position) \(first.type) ",
                x: x, y: y, style: Theme.error, clip: area)
        }
        if let error = latestError {
            buffer.write(
                "│ ✗ latest error @\(error.position) \(error.module) \(error.code): \(error.message)", x: x, y: y,
                style: Theme.error, clip: area)
        } else {
            buffer.write("│ no errors", x: x, y: y, style: Theme.muted, clip: area)
        }
    }
}
