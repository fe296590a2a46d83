import AlertsFeature
import Bus
import ConverterFeature
import FrontEnd
import ReservationsFeature
import Runtime
import SystemFeature
import TerminalUI
import TestSupport
import Testing
import WatchlistFeature

/// Time travel over a recorded history: stepping, jumping, and what each event changed.
// Folds whole histories at every position: off the cooperative pool.
@Suite(.ownThreads)
struct ReplayBrowserTests {
    static func browser(checkpointInterval: Int? = nil) -> ReplayBrowser {
        ReplayBrowser(events: Fixtures.history, coordinator: coordinator, checkpointInterval: checkpointInterval) {
            LogReplay(
                registry: ModuleRegistry([
                    WatchlistModule.make(), ConverterModule.make(), ReservationsModule.make(), AlertsModule.make(),
                    SystemModule.make(),
                ]))
        }
    }

    static let coordinator = Coordinator(router: Fixtures.router)

    @Test func steppingForwardShowsEachEventAndWhatItChanged() throws {
        var browser = Self.browser()
        #expect(browser.applied == 0 && browser.current == nil)
        for _ in 0..<2 { _ = browser.handle(.right) }
        #expect(browser.applied == 2)
        let event = try #require(browser.current)
        #expect(event.position == Fixtures.history[1].position)
        let screen = ReplayView(browser: browser).rendered(width: 120, height: 40).text
        #expect(screen.contains("REPLAY · after 2 of \(Fixtures.history.count) events"))
        #expect(screen.contains(event.type))
        // The second event changed something, and the panel names who and where.
        #expect(!browser.changes.isEmpty)
        #expect(screen.contains(try #require(browser.changes.first?.owner)))
    }

    @Test func aResizedTerminalKeepsItsSizeWhileMovingThroughTheLog() {
        // Given a browser part way through the log
        var browser = Self.browser()
        browser.move(to: 2)
        // When the terminal is resized, then the browser moves back and forward
        browser.resize(to: TerminalSize(columns: 132, rows: 50))
        browser.move(to: 1)
        browser.move(to: Fixtures.history.count)
        // Then the screens are still drawn for the new size
        #expect(browser.state.size == TerminalSize(columns: 132, rows: 50))
    }

    @Test func steppingBackGivesTheSameStateAsComingForward() {
        var forward = Self.browser()
        forward.move(to: 3)
        var back = Self.browser()
        back.move(to: Fixtures.history.count)
        while back.applied > 3 { _ = back.handle(.left) }
        #expect(back.state.models == forward.state.models)
        #expect(back.changes == forward.changes)
    }

    @Test func steppingBackFromCheckpointsGivesWhatAFreshFoldGivesAtEveryPosition() {
        var back = Self.browser(checkpointInterval: 2)
        back.move(to: Fixtures.history.count)
        for count in (0..<Fixtures.history.count).reversed() {
            _ = back.handle(.left)
            var fresh = Self.browser()
            fresh.move(to: count)
            #expect(back.applied == count)
            #expect(back.state.models == fresh.state.models, "after \(count) events")
            #expect(back.changes == fresh.changes, "after \(count) events")
        }
        // Forward again, from the checkpoints the way back left.
        for count in [9, 16, 1, 12] {
            back.move(to: count)
            var fresh = Self.browser()
            fresh.move(to: count)
            #expect(back.state.models == fresh.state.models && back.changes == fresh.changes, "after \(count) events")
        }
    }

    @Test func aCopiedBrowserMovesIndependentlyOfTheOriginal() {
        var original = Self.browser(checkpointInterval: 2)
        original.move(to: 4)
        let models = original.state.models
        var copy = original
        copy.move(to: Fixtures.history.count)
        original.move(to: 5)
        copy.move(to: 3)
        var fresh = Self.browser()
        fresh.move(to: 5)
        #expect(original.state.models == fresh.state.models)
        fresh.move(to: 3)
        #expect(copy.state.models == fresh.state.models)
        #expect(models != original.state.models, "the fixture's fifth event changes a read model")
    }

    @Test func jumpingToAPositionOrATimeLandsOnThatEvent() throws {
        var browser = Self.browser()
        let target = Fixtures.history[4]
        for key in ["g"] + String(target.position).map(String.init) {
            _ = browser.handle(.character(Character(key)))
        }
        _ = browser.handle(.enter)
        #expect(browser.current?.position == target.position)

        _ = browser.handle(.home)
        #expect(browser.applied == 0)
        _ = browser.handle(.character("g"))
        for character in "\(Fixtures.history[2].commitTime)" {
            _ = browser.handle(.character(character))
        }
        _ = browser.handle(.enter)
        #expect(browser.current?.position == Fixtures.history[2].position)

        _ = browser.handle(.character("g"))
        for character in "soon" { _ = browser.handle(.character(character)) }
        _ = browser.handle(.enter)
        #expect(browser.problem?.contains("'soon' is neither a position nor a time") == true)
    }

    @Test func actionsAreReadOnlyAndQQuits() {
        var browser = Self.browser()
        browser.move(to: Fixtures.history.count)
        #expect(browser.handle(.character("q")) == false)
    }
}
