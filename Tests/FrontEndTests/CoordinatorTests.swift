import EventLog
import FrontEnd
import Money
import Runtime
import TerminalUI
import Testing

/// Key sequences, from a fixed state, and the command URLs they dispatch.
struct CoordinatorTests {
    let coordinator = Coordinator(router: Fixtures.router)

    /// Types `keys` (a string's characters, or special keys) and returns every effect.
    func press(_ keys: [Key], in state: inout AppState) -> [Effect] {
        keys.flatMap { coordinator.handle($0, in: &state) }
    }

    func typing(_ text: String) -> [Key] { text.map { Key.character($0) } }

    /// Every URL dispatched routes through the real router.
    func expectRoutes(_ effects: [Effect]) {
        for case .dispatch(let url) in effects {
            #expect(throws: Never.self) { try Fixtures.router.route(url) }
        }
    }

    @Test func addingAPairThroughThePickerDispatchesWatchlistAdd() {
        var state = Fixtures.state
        let effects = press([.character("a")] + typing("eur") + [.enter] + typing("ch") + [.enter], in: &state)
        #expect(effects == [.dispatch(CommandURL.Watchlist.add(base: "EUR", quote: "CHF"))])
        #expect(state.navigation.overlay == nil)
        expectRoutes(effects)
    }

    @Test func escapeCancelsThePickerWithoutDispatching() {
        var state = Fixtures.state
        let effects = press([.character("a")] + typing("EUR") + [.enter, .escape], in: &state)
        #expect(effects.isEmpty)
        #expect(state.navigation.overlay == nil)
    }

    @Test func settingTheAmountDispatchesConverterAmountInTheCurrentCurrency() {
        var state = Fixtures.state
        let effects = press([.character("m")] + typing("1250.50") + [.enter], in: &state)
        #expect(effects == [.dispatch(CommandURL.Converter.amount(value: "1250.50", currency: "EUR"))])
        let other = press([.character("m")] + typing("90 usd") + [.enter], in: &state)
        #expect(other == [.dispatch(CommandURL.Converter.amount(value: "90", currency: "USD"))])
        expectRoutes(effects + other)
    }

    @Test func reservingUsesTheSelectedPairAndTheRateShown() {
        var state = Fixtures.state
        let effects = press([.down, .character("r")] + typing("500") + [.enter], in: &state)
        #expect(
            effects == [
                .dispatch(CommandURL.Reservations.reserve(base: "EUR", quote: "GBP", amount: "500", rate: "0.8562"))
            ])
        expectRoutes(effects)
    }

    @Test func cancellingOnTheReservationsScreenCancelsTheSelectedOne() {
        var state = Fixtures.state
        let effects = press([.character("2"), .down, .down, .character("c")], in: &state)
        #expect(effects == [.dispatch(CommandURL.Reservations.cancel(id: "R7"))])
        expectRoutes(effects)
    }

    @Test func alertsAreSetThroughThePickerAndClearedBySelection() {
        var state = Fixtures.state
        let set = press(
            [.character("s")] + typing("usd") + [.enter] + typing("jpy") + [.enter] + typing(">170") + [.enter],
            in: &state)
        #expect(set == [.dispatch(CommandURL.Alerts.set(base: "USD", quote: "JPY", above: "170"))])
        let clear = press([.character("3"), .down, .character("x")], in: &state)
        #expect(clear == [.dispatch(CommandURL.Alerts.clear(id: "A12"))])
        expectRoutes(set + clear)
    }

    @Test func theCommandLineCompletesModulesAndCommandsThenDispatchesTheURL() {
        var state = Fixtures.state
        _ = press([.character(":")] + typing("wat") + [.tab], in: &state)
        guard case .commandLine(let field, _) = state.navigation.overlay else {
            Issue.record("the command line is not open")
            return
        }
        #expect(field.text == "bureau://watchlist/")
        _ = press(typing("a") + [.tab], in: &state)
        guard case .commandLine(let completed, _) = state.navigation.overlay else {
            Issue.record("the command line closed on a tab")
            return
        }
        #expect(completed.text == "bureau://watchlist/add?")
        let effects = press(typing("base=GBP&quote=CHF") + [.enter], in: &state)
        #expect(effects == [.dispatch("bureau://watchlist/add?base=GBP&quote=CHF")])
    }

    @Test func tabOnAModuleListsItsCommands() {
        var state = Fixtures.state
        _ = press([.character(":")] + typing("reservations/") + [.tab], in: &state)
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
        var state = Fixtures.state
        _ = press([.character("?")], in: &state)
        #expect(state.navigation.overlay == .help)
        _ = press([.character("x")], in: &state)
        #expect(state.navigation.overlay == nil)
        #expect(press([.character("q")], in: &state) == [.quit])
    }

    @Test func aKeyThatCannotActSaysWhy() {
        var state = AppState()
        #expect(press([.character("r")], in: &state).isEmpty)
        #expect(state.navigation.notice == "add a pair first (a)")
    }
}
