import EventLog
import FrontEnd
import Money
import Runtime
import TerminalUI
import Testing

/// What the person does at the terminal, through the coordinator as the live session drives it
/// (``SessionInput/key(_:)``): key sequences from a fixed state and the command URLs they
/// dispatch, and the terminal resized or closed.
struct CoordinatorTests {
    let coordinator = Coordinator(router: Fixtures.router)

    /// Types `keys` (a string's characters, or special keys), one input each; returns every effect.
    func press(_ keys: [Key], in state: inout AppState) -> [Effect] {
        keys.flatMap { coordinator.handle(.key($0), in: &state) }
    }

    func typing(_ text: String) -> [Key] { text.map { Key.character($0) } }

    /// Every URL dispatched routes through the real router.
    func expectRoutes(_ effects: [Effect]) {
        for case .dispatch(let url) in effects {
            #expect(throws: Never.self) { try Fixtures.router.route(url) }
        }
    }

    @Test func addingAPairThroughThePickerDispatchesWatchlistAdd() {
        // Given the fixtures' screens
        var state = Fixtures.state
        // When a pair is picked: a, the base typed and chosen, the quote typed and chosen
        let effects = press([.character("a")] + typing("eur") + [.enter] + typing("ch") + [.enter], in: &state)
        // Then the pair is added, and the picker is closed
        #expect(effects == [.dispatch(CommandURL.Watchlist.add(base: "EUR", quote: "CHF"))])
        #expect(state.navigation.overlay == nil)
        expectRoutes(effects)
    }

    @Test func escapeCancelsThePickerWithoutDispatching() {
        // Given the fixtures' screens
        var state = Fixtures.state
        // When the picker is left with Escape after choosing a base
        let effects = press([.character("a")] + typing("EUR") + [.enter, .escape], in: &state)
        // Then nothing is sent and the picker is closed
        #expect(effects.isEmpty)
        #expect(state.navigation.overlay == nil)
    }

    @Test func settingTheAmountDispatchesConverterAmountInTheCurrentCurrency() {
        // Given the fixtures' screens, converting EUR
        var state = Fixtures.state
        // When an amount is typed without a currency
        let effects = press([.character("m")] + typing("1250.50") + [.enter], in: &state)
        // Then it is in the current currency
        #expect(effects == [.dispatch(CommandURL.Converter.amount(value: "1250.50", currency: "EUR"))])
        // When one is typed with a currency
        let other = press([.character("m")] + typing("90 usd") + [.enter], in: &state)
        // Then it is in that currency
        #expect(other == [.dispatch(CommandURL.Converter.amount(value: "90", currency: "USD"))])
        expectRoutes(effects + other)
    }

    @Test func reservingUsesTheSelectedPairAndTheRateShown() {
        // Given the fixtures' watchlist
        var state = Fixtures.state
        // When the second pair is selected and 500 reserved
        let effects = press([.down, .character("r")] + typing("500") + [.enter], in: &state)
        // Then the reservation is of that pair, at the rate shown for it
        #expect(
            effects == [
                .dispatch(CommandURL.Reservations.reserve(base: "EUR", quote: "GBP", amount: "500", rate: "0.8562"))
            ])
        expectRoutes(effects)
    }

    @Test func cancellingOnTheReservationsScreenCancelsTheSelectedOne() {
        // Given the fixtures' reservations
        var state = Fixtures.state
        // When the third is selected on the Reservations screen and cancelled
        let effects = press([.character("2"), .down, .down, .character("c")], in: &state)
        // Then that one is cancelled
        #expect(effects == [.dispatch(CommandURL.Reservations.cancel(id: "R7"))])
        expectRoutes(effects)
    }

    @Test func alertsAreSetThroughThePickerAndClearedBySelection() {
        // Given the fixtures' alerts
        var state = Fixtures.state
        // When a pair is picked and a threshold typed
        let set = press(
            [.character("s")] + typing("usd") + [.enter] + typing("jpy") + [.enter] + typing(">170") + [.enter],
            in: &state)
        // Then an alert above it is set
        #expect(set == [.dispatch(CommandURL.Alerts.set(base: "USD", quote: "JPY", above: "170"))])
        // When the second alert is selected on the Alerts screen and cleared
        let clear = press([.character("3"), .down, .character("x")], in: &state)
        // Then that one is cleared
        #expect(clear == [.dispatch(CommandURL.Alerts.clear(id: "A12"))])
        expectRoutes(set + clear)
    }

    @Test func theCommandLineCompletesModulesAndCommandsThenDispatchesTheURL() {
        // Given the command line open, with the start of a module typed
        var state = Fixtures.state
        _ = press([.character(":")] + typing("wat"), in: &state)
        // When Tab is pressed
        _ = press([.tab], in: &state)
        // Then the module is completed
        guard case .commandLine(let field, _) = state.navigation.overlay else {
            Issue.record("the command line is not open")
            return
        }
        #expect(field.text == "bureau://watchlist/")
        // When the start of a command is typed and Tab pressed
        _ = press(typing("a") + [.tab], in: &state)
        // Then the command is completed
        guard case .commandLine(let completed, _) = state.navigation.overlay else {
            Issue.record("the command line closed on a tab")
            return
        }
        #expect(completed.text == "bureau://watchlist/add?")
        // When its parameters are typed and Enter pressed
        let effects = press(typing("base=GBP&quote=CHF") + [.enter], in: &state)
        // Then the URL is dispatched
        #expect(effects == [.dispatch("bureau://watchlist/add?base=GBP&quote=CHF")])
    }

    @Test func tabOnAModuleListsItsCommands() {
        // Given the command line open on a module
        var state = Fixtures.state
        _ = press([.character(":")] + typing("reservations/"), in: &state)
        // When Tab is pressed
        _ = press([.tab], in: &state)
        // Then the module's commands are listed
        guard case .commandLine(_, let completions) = state.navigation.overlay else {
            Issue.record("the command line is not open")
            return
        }
        #expect(
            completions == [
                "bureau://reservations/reserve?", "bureau://reservations/cancel?", "bureau://reservations/commission?",
            ])
    }

    @Test func questionMarkOpensHelpAndAnyKeyClosesIt() {
        // Given the fixtures' screens
        var state = Fixtures.state
        // When ? is pressed, then help is open
        _ = press([.character("?")], in: &state)
        #expect(state.navigation.overlay == .help)
        // When any other key is pressed, then help is closed
        _ = press([.character("x")], in: &state)
        #expect(state.navigation.overlay == nil)
        // When q is pressed on help, then the front-end quits
        _ = press([.character("?")], in: &state)
        #expect(press([.character("q")], in: &state) == [.quit])
    }

    @Test func aKeyThatCannotActSaysWhy() {
        // Given an empty watchlist
        var state = AppState()
        // When r (reserve) is pressed
        let effects = press([.character("r")], in: &state)
        // Then nothing is sent, and the notice says what to do first
        #expect(effects.isEmpty)
        #expect(state.navigation.notice == "add a pair first (a)")
    }

    @Test func aResizedTerminalIsDrawnAgainInFullAtItsNewSize() {
        // Given the fixtures' screens on an 80 × 24 terminal
        var state = Fixtures.state
        state.size = TerminalSize(columns: 80, rows: 24)
        // When the terminal is resized to 132 × 40
        let effects = coordinator.handle(.resized(TerminalSize(columns: 132, rows: 40)), in: &state)
        // Then the state has the new size, and the next frame is drawn in full
        #expect(state.size == TerminalSize(columns: 132, rows: 40))
        #expect(effects == [.repaint])
        // And nothing else changed
        var expected = Fixtures.state
        expected.size = state.size
        #expect(state == expected)
    }

    @Test func aClosedTerminalEndsTheSession() {
        // Given the fixtures' screens, with the command line open
        var state = Fixtures.state
        _ = press([.character(":")], in: &state)
        // When the terminal goes away
        let effects = coordinator.handle(.terminalClosed, in: &state)
        // Then the front-end quits
        #expect(effects == [.quit])
    }
}
