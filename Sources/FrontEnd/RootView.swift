import TerminalUI

/// The whole screen for a state: tabs, the current screen, the event pane, the request line,
/// the status line, and whatever is open on top.
public struct RootView: Component, Sendable {
    public var state: AppState

    public init(state: AppState) {
        self.state = state
    }

    public func draw(in buffer: inout CellBuffer, area: Rect) {
        let (titleRow, rest) = area.splitTop(1)
        let (aboveStatus, statusRow) = rest.splitBottom(1)
        let (aboveRequest, requestRow) = aboveStatus.splitBottom(1)
        let paneHeight = min(10, max(3, aboveRequest.height / 3))
        let (main, pane) = aboveRequest.splitBottom(paneHeight)
        drawTitle(in: &buffer, area: titleRow)
        let body = Rect(x: main.x, y: main.y + 1, width: main.width, height: main.height - 1)
        let navigation = state.navigation
        let models = state.models
        switch navigation.tab {
        case .watchlist:
            WatchlistScreen(
                watchlist: models.watchlist, converter: models.converter, selected: navigation.selected(.watchlist)
            ).draw(in: &buffer, area: body)
        case .reservations:
            ReservationsScreen(reservations: models.reservations, selected: navigation.selected(.reservations))
                .draw(in: &buffer, area: body)
        case .alerts:
            AlertsScreen(alerts: models.alerts, selected: navigation.selected(.alerts)).draw(in: &buffer, area: body)
        }
        EventPane(lines: models.tail).draw(in: &buffer, area: pane)
        RequestLine(latest: state.requests.latest, pending: state.requests.pendingCount, notice: navigation.notice)
            .draw(in: &buffer, area: requestRow)
        StatusLine(connection: state.connection, latestError: models.errors.errors.first, passedOver: models.passedOver)
            .draw(in: &buffer, area: statusRow)
        switch navigation.overlay {
        case .picker(let picker, let purpose):
            PickerView(picker: picker, purpose: purpose).draw(in: &buffer, area: aboveRequest)
        case .prompt(let purpose, let field):
            PromptView(purpose: purpose, field: field, amount: models.converter.amount).draw(in: &buffer, area: main)
        case .commandLine(let field, let completions):
            CommandLineView(field: field, completions: completions)
                .draw(in: &buffer, area: Rect(x: area.x, y: area.y, width: area.width, height: requestRow.maxY))
        case .help:
            HelpView().draw(in: &buffer, area: aboveRequest)
        case nil:
            break
        }
    }

    private func drawTitle(in buffer: inout CellBuffer, area: Rect) {
        var x = buffer.write(" Bureau ", x: area.x, y: area.y, style: Theme.title, clip: area)
        for tab in Navigation.Tab.allCases {
            let label = " \(tab.rawValue + 1) \(tab.title) "
            let active = tab == state.navigation.tab
            x = buffer.write(
                active ? "[\(label)]" : " \(label) ", x: x, y: area.y, style: active ? Theme.activeTab : .plain,
                clip: area)
        }
        let help = "? keys  : command  q quit "
        buffer.write(help, x: area.maxX - DisplayWidth.of(help), y: area.y, style: Theme.muted, clip: area)
    }
}
