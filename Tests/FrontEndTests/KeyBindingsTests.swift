import Foundation
import FrontEnd
import TerminalUI
import Testing

/// One table says what each key does and how help shows it; README shows the same table.
struct KeyBindingsTests {
    @Test func noKeyIsBoundTwice() {
        let keys = KeyBindings.all.flatMap(\.actions).map(\.key)
        #expect(Set(keys).count == keys.count)
    }

    /// Help names exactly the keys a row binds: none left out, none that does something else.
    @Test(arguments: KeyBindings.all.filter { !$0.actions.isEmpty })
    func eachRowNamesExactlyTheKeysItBinds(binding: KeyBindings.Binding) {
        let shown = binding.keys.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "/" }).map(String.init)
        #expect(shown.sorted() == binding.actions.map { KeyBindings.name(of: $0.key) }.sorted())
    }

    /// The keys whose effect shows at once; CoordinatorTests drive the others through their screens.
    @Test func theCoordinatorDoesWhatTheTableSays() {
        let coordinator = Coordinator(router: Fixtures.router)
        for bound in KeyBindings.all.flatMap(\.actions) {
            var state = Fixtures.state
            let effects = coordinator.handle(.key(bound.key), in: &state)
            switch bound.action {
            case .quit: #expect(effects == [.quit], "\(bound.key)")
            case .openHelp: #expect(state.navigation.overlay == .help, "\(bound.key)")
            case .show(let tab): #expect(state.navigation.tab == tab, "\(bound.key)")
            case .nextTab: #expect(state.navigation.tab == .reservations, "\(bound.key)")
            case .previousTab: #expect(state.navigation.tab == .alerts, "\(bound.key)")
            case .openCommandLine:
                guard case .commandLine = state.navigation.overlay else {
                    Issue.record("\(bound.key) does not open the command line")
                    continue
                }
            default: continue
            }
        }
    }

    @Test func aKeyTheTableDoesNotBindDoesNothing() {
        let coordinator = Coordinator(router: Fixtures.router)
        for key: Key in [.character("z"), .character("Q"), .home, .control("x")] {
            #expect(KeyBindings.action(for: key) == nil)
            var state = Fixtures.state
            #expect(coordinator.handle(.key(key), in: &state).isEmpty)
            #expect(state == Fixtures.state)
        }
    }

    @Test func readmeShowsTheTable() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        #expect(text.contains(KeyBindings.markdown + "\n"), "README's key table differs from KeyBindings.markdown")
    }
}
