import AlertsFeature
import Bus
import ConverterFeature
import Foundation
import Guards
import Money
import ReservationsFeature
import Runtime
import TerminalUI
import WatchlistFeature

/// Turns inputs into new states and effects: all navigation lives here, none in the screens, and
/// so does what becomes of the requests sent, their traces and the link to the bus.
///
/// ``handle(_:in:)`` is a pure function of the state and the input (plus the router's command
/// list for completion), so key sequences, answers and reconnections are tested without a
/// terminal or a bus; ``LiveSession`` performs the effects it returns.
public struct Coordinator: Sendable {
    public let router: CommandRouter
    /// How long to wait before subscribing again after the subscription ended: the shared backoff,
    /// in fixed steps (no jitter: one front-end is not a herd).
    public let reconnect: Backoff

    public init(
        router: CommandRouter,
        reconnect: Backoff = Backoff(initial: .milliseconds(250), maximum: .seconds(10), jitter: 0)
    ) {
        self.router = router
        self.reconnect = reconnect
    }

    /// The one way the front-end's state changes: a key, the terminal, or what the bus and its
    /// calls brought.
    public func handle(_ input: SessionInput, in state: inout AppState) -> [Effect] {
        switch input {
        case .started:
            return [.subscribe(after: state.connection.delivered, delay: .zero)]
        case .key(let key):
            return press(key, in: &state)
        case .resized(let size):
            state.size = size
            return [.repaint]
        case .terminalClosed:
            return [.quit]
        case .dispatched(let url, let id, let traceParent):
            // Recorded as pending, or as failed with the router's reason when it does not route;
            // a trace started for a request that is not sent ends at once.
            if let outgoing = state.requests.start(url, router: router, id: id, traceParent: traceParent) {
                return [.publish(outgoing)]
            }
            return traceParent == nil ? [] : [.trace(id, .end(failure: nil))]
        case .delivered(.event(let event)):
            let effects = state.receive(event)
            state.connection.delivered = event.position
            state.connection.failures = 0
            return effects
        case .delivered(.caughtUp(let head)):
            state.connection.caughtUp = true
            state.connection.isConnected = true
            state.connection.problem = nil
            state.connection.failures = 0
            state.connection.head = max(state.connection.head, head)
        case .delivered(.connection(let connected)):
            guard state.connection.stopped == nil else { break }
            state.connection.isConnected = connected
            state.connection.problem = connected ? nil : "no heartbeat"
        case .subscriptionEnded(let problem):
            state.connection.isConnected = false
            // The next subscription reads the log again before it is live: the status line says
            // "catching up" until it has.
            state.connection.caughtUp = false
            guard state.connection.stopped == nil else { break }
            state.connection.problem = problem
            state.connection.failures += 1
            return [
                .subscribe(
                    after: state.connection.delivered,
                    delay: reconnect.nominalDelay(attempt: state.connection.failures))
            ]
        case .aheadOfLog(let position, let head, let epoch):
            // Subscribing again would pass over everything this bus publishes up to `position` as
            // already shown: stop, and say what to do (README's subscriber algorithm, step 1).
            state.connection.isConnected = false
            state.connection.head = head
            state.connection.problem = nil
            state.connection.stopped =
                "the bus's log ends at position \(head)" + (epoch == 0 ? "" : " (daemon epoch \(epoch))")
                + ", before position \(position) shown here: it is not the log this front-end read "
                + "(restored, replaced or another bus's). Quit and start it again to read this log"
        case .pinged(let head, let problem):
            if state.connection.stopped != nil {
                if let head { state.connection.head = head }
            } else if let head {
                state.connection.isConnected = true
                state.connection.problem = nil
                state.connection.head = max(state.connection.head, head)
            } else {
                state.connection.isConnected = false
                state.connection.problem = problem
            }
        case .publishFailed(let id, let reason):
            return state.requests.publishFailed(id, reason: reason)
        }
        return []
    }

    /// A key: on the overlay open, if any, else on the main screens.
    private func press(_ key: Key, in state: inout AppState) -> [Effect] {
        state.navigation.notice = nil
        switch state.navigation.overlay {
        case .picker(var picker, let purpose):
            switch picker.handle(key) {
            case .open:
                state.navigation.overlay = .picker(picker, purpose)
                return []
            case .cancelled:
                state.navigation.overlay = nil
                return []
            case .picked(let pair):
                state.navigation.overlay = nil
                return picked(pair, for: purpose, in: &state)
            }
        case .prompt(let purpose, var field):
            switch key {
            case .escape, .control("c"):
                state.navigation.overlay = nil
                return []
            case .enter:
                state.navigation.overlay = nil
                return submit(field.text, for: purpose, in: &state)
            default:
                _ = field.edit(key)
                state.navigation.overlay = .prompt(purpose, field)
                return []
            }
        case .commandLine(var field, _):
            switch key {
            case .escape, .control("c"):
                state.navigation.overlay = nil
                return []
            case .enter:
                state.navigation.overlay = nil
                let url = field.text.trimmingCharacters(in: .whitespaces)
                return url.isEmpty ? [] : [.dispatch(url)]
            case .tab:
                let completions = complete(&field)
                state.navigation.overlay = .commandLine(field, completions: completions)
                return []
            default:
                _ = field.edit(key)
                state.navigation.overlay = .commandLine(field, completions: [])
                return []
            }
        case .help:
            state.navigation.overlay = nil
            return key == .character("q") ? [.quit] : []
        case nil:
            return handleMain(key, in: &state)
        }
    }

    /// A key on the main screens: what ``KeyBindings`` binds it to, if anything.
    private func handleMain(_ key: Key, in state: inout AppState) -> [Effect] {
        guard let action = KeyBindings.action(for: key) else { return [] }
        let tab = state.navigation.tab
        let count = Navigation.Tab.allCases.count
        switch action {
        case .quit:
            return [.quit]
        case .openHelp:
            state.navigation.overlay = .help
        case .openCommandLine:
            state.navigation.overlay = .commandLine(TextField("bureau://"), completions: [])
        case .show(let shown):
            state.navigation.tab = shown
        case .nextTab:
            state.navigation.tab = Navigation.Tab(rawValue: (tab.rawValue + 1) % count) ?? tab
        case .previousTab:
            state.navigation.tab = Navigation.Tab(rawValue: (tab.rawValue + count - 1) % count) ?? tab
        case .selectPrevious:
            move(by: -1, in: &state)
        case .selectNext:
            move(by: 1, in: &state)
        case .addPair:
            state.navigation.overlay = .picker(
                PairPicker(currencies: currencies(state), watched: Set(state.models.watchlist.pairs)), .watch)
        case .setAlert:
            state.navigation.overlay = .picker(PairPicker(currencies: currencies(state)), .alert)
        case .setAmount:
            state.navigation.overlay = .prompt(.amount, TextField())
        case .removePair:
            guard tab == .watchlist, let pair = selectedPair(state) else { return notice("no pair selected", &state) }
            return [.dispatch(CommandURL.Watchlist.remove(base: pair.base.code, quote: pair.quote.code))]
        case .reserve:
            guard let pair = selectedPair(state) else { return notice("add a pair first (a)", &state) }
            guard let rate = state.models.watchlist.latest?.quote(from: pair.base, to: pair.quote) else {
                return notice("no rate for \(pair) yet", &state)
            }
            state.navigation.overlay = .prompt(.reserve(pair, rate: DecimalText.plain(rate)), TextField())
        case .cancelReservation:
            guard tab == .reservations else { return notice("cancel works on the Reservations screen (2)", &state) }
            let rows = state.models.reservations.reservations
            let index = state.navigation.selected(.reservations)
            guard rows.indices.contains(index) else { return notice("no reservation selected", &state) }
            return [.dispatch(CommandURL.Reservations.cancel(id: rows[index].id))]
        case .clearAlert:
            guard tab == .alerts else { return notice("clear works on the Alerts screen (3)", &state) }
            let rows = state.models.alerts.alerts
            let index = state.navigation.selected(.alerts)
            guard rows.indices.contains(index) else { return notice("no alert selected", &state) }
            return [.dispatch(CommandURL.Alerts.clear(id: rows[index].id))]
        }
        return []
    }

    private func notice(_ text: String, _ state: inout AppState) -> [Effect] {
        state.navigation.notice = text
        return []
    }

    /// The picked pair goes back to whoever opened the picker.
    private func picked(
        _ pair: CurrencyPair, for purpose: Navigation.PickerPurpose, in state: inout AppState
    )
        -> [Effect]
    {
        switch purpose {
        case .watch:
            return [.dispatch(CommandURL.Watchlist.add(base: pair.base.code, quote: pair.quote.code))]
        case .alert:
            state.navigation.overlay = .prompt(.alert(pair), TextField())
            return []
        }
    }

    private func submit(_ text: String, for purpose: Navigation.PromptPurpose, in state: inout AppState) -> [Effect] {
        let words = text.split(separator: " ").map(String.init)
        guard let first = words.first else { return [] }
        switch purpose {
        case .amount:
            let currency = words.count > 1 ? words[1].uppercased() : state.models.converter.amount.currency.code
            return [.dispatch(CommandURL.Converter.amount(value: first, currency: currency))]
        case .reserve(let pair, let rate):
            return [
                .dispatch(
                    CommandURL.Reservations.reserve(
                        base: pair.base.code, quote: pair.quote.code, amount: first, rate: rate))
            ]
        case .alert(let pair):
            let threshold = text.replacingOccurrences(of: " ", with: "")
            let value = String(threshold.drop { !$0.isNumber && $0 != "." })
            if threshold.hasPrefix(">") || threshold.lowercased().hasPrefix("above") {
                return [.dispatch(CommandURL.Alerts.set(base: pair.base.code, quote: pair.quote.code, above: value))]
            } else if threshold.hasPrefix("<") || threshold.lowercased().hasPrefix("below") {
                return [.dispatch(CommandURL.Alerts.set(base: pair.base.code, quote: pair.quote.code, below: value))]
            }
            return notice("start the threshold with > or <, e.g. >1.2", &state)
        }
    }

    /// Completes the field to the longest common prefix of the router's completions; returns them.
    private func complete(_ field: inout TextField) -> [String] {
        let completions = router.completions(for: field.text)
        guard let first = completions.first else { return [] }
        var common = first
        for completion in completions.dropFirst() {
            common = String(common.commonPrefix(with: completion))
        }
        if common.count > field.text.count { field.text = common }
        return completions.count > 1 ? completions : []
    }

    private func move(by delta: Int, in state: inout AppState) {
        let tab = state.navigation.tab
        let count: Int =
            switch tab {
            case .watchlist: state.models.watchlist.pairs.count
            case .reservations: state.models.reservations.reservations.count
            case .alerts: state.models.alerts.alerts.count
            }
        let current = state.navigation.selected(tab)
        state.navigation.selection[tab] = max(0, min(count - 1, current + delta))
    }

    private func selectedPair(_ state: AppState) -> CurrencyPair? {
        let pairs = state.models.watchlist.pairs
        let index = min(state.navigation.selected(.watchlist), pairs.count - 1)
        return pairs.indices.contains(index) ? pairs[index] : nil
    }

    /// The currencies the latest rates know, else every currency Bureau knows.
    private func currencies(_ state: AppState) -> [Currency] {
        if let rates = state.models.watchlist.latest { return rates.currencies.sorted() }
        return Currency.all
    }
}
