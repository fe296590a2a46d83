import TerminalUI

/// The keys the front-end answers to on its screens, in one table: what each key does (the
/// ``Coordinator`` acts on the table's ``Action``s, and on nothing else) and how help shows it
/// (`?`, `bureau tui --help` and README's key table, which a test keeps equal to ``markdown``).
public enum KeyBindings {
    /// What a key does on the main screens.
    public enum Action: Sendable, Equatable {
        case show(Navigation.Tab)
        case nextTab, previousTab
        case selectPrevious, selectNext
        case addPair, removePair
        case setAmount
        case reserve, cancelReservation
        case setAlert, clearAlert
        case openCommandLine, openHelp
        case quit
    }

    /// One row of help: keys, what they do, and for the main screens what each key is bound to.
    public struct Binding: Sendable, Equatable {
        /// The keys as help shows them, e.g. `1 2 3, Tab, Shift-Tab, ← →`.
        public var keys: String
        /// What they do, as help says it.
        public var help: String
        /// The main-screen keys this row binds; empty for a row that describes keys an overlay
        /// (the picker, a prompt, the command line) handles itself. A test checks that these
        /// are exactly the keys ``keys`` names.
        public var actions: [KeyAction]

        init(_ keys: String, _ help: String, _ actions: [KeyAction] = []) {
            self.keys = keys
            self.help = help
            self.actions = actions
        }
    }

    /// A key and what it does.
    public struct KeyAction: Sendable, Equatable {
        public var key: Key
        public var action: Action

        init(_ key: Key, _ action: Action) {
            self.key = key
            self.action = action
        }
    }

    public static let all: [Binding] = [
        Binding(
            "1 2 3, Tab, Shift-Tab, ← →", "Watchlist, Reservations, Alerts",
            [
                KeyAction(.character("1"), .show(.watchlist)), KeyAction(.character("2"), .show(.reservations)),
                KeyAction(.character("3"), .show(.alerts)), KeyAction(.tab, .nextTab),
                KeyAction(.backTab, .previousTab), KeyAction(.left, .previousTab), KeyAction(.right, .nextTab),
            ]),
        Binding(
            "↑ ↓, k j", "select a row",
            [
                KeyAction(.up, .selectPrevious), KeyAction(.down, .selectNext),
                KeyAction(.character("k"), .selectPrevious), KeyAction(.character("j"), .selectNext),
            ]),
        Binding(
            "a", "add a pair to the watchlist (picker: base, then quote)", [KeyAction(.character("a"), .addPair)]),
        Binding("d", "remove the selected pair (Watchlist)", [KeyAction(.character("d"), .removePair)]),
        Binding("m", "set the converter's amount, e.g. 250 or 250 USD", [KeyAction(.character("m"), .setAmount)]),
        Binding(
            "r", "reserve an amount of the selected pair at its quote", [KeyAction(.character("r"), .reserve)]),
        Binding(
            "c", "cancel the selected reservation (Reservations)",
            [KeyAction(.character("c"), .cancelReservation)]),
        Binding("s", "set an alert: pick a pair, then >1.2 or <1.0", [KeyAction(.character("s"), .setAlert)]),
        Binding("x", "clear the selected alert (Alerts)", [KeyAction(.character("x"), .clearAlert)]),
        Binding(
            ":", "command line: any bureau:// URL; Tab completes", [KeyAction(.character(":"), .openCommandLine)]),
        Binding("type, Backspace", "in the picker: filter; Backspace on empty goes back"),
        Binding("Enter / Esc", "confirm / cancel the picker, prompt or command line"),
        Binding("?", "this help (any key closes it)", [KeyAction(.character("?"), .openHelp)]),
        Binding(
            "q, Ctrl-C, Ctrl-D", "quit",
            [KeyAction(.character("q"), .quit), KeyAction(.control("c"), .quit), KeyAction(.control("d"), .quit)]),
    ]

    /// What `key` does on the main screens; nil for a key bound to nothing.
    public static func action(for key: Key) -> Action? {
        for binding in all {
            if let bound = binding.actions.first(where: { $0.key == key }) { return bound.action }
        }
        return nil
    }

    /// How help writes `key`: `a`, `Tab`, `←`, `Ctrl-C`.
    public static func name(of key: Key) -> String {
        switch key {
        case .character(let character): String(character)
        case .enter: "Enter"
        case .escape: "Esc"
        case .backspace: "Backspace"
        case .tab: "Tab"
        case .backTab: "Shift-Tab"
        case .up: "↑"
        case .down: "↓"
        case .left: "←"
        case .right: "→"
        case .home: "Home"
        case .end: "End"
        case .pageUp: "PgUp"
        case .pageDown: "PgDn"
        case .delete: "Del"
        case .control(let character): "Ctrl-" + character.uppercased()
        case .unknown: "(unknown)"
        }
    }

    /// The bindings as plain text, one per line, the keys in a column as wide as the widest:
    /// what `bureau tui --help` prints.
    public static var plainText: String {
        let width = all.map { DisplayWidth.of($0.keys) }.max() ?? 0
        return all.map { DisplayWidth.fit($0.keys, to: width) + "  " + $0.help }.joined(separator: "\n")
    }

    /// The bindings as a Markdown table, as README shows them.
    public static var markdown: String {
        (["| key | action |", "|---|---|"] + all.map { "| \($0.keys) | \($0.help) |" }).joined(separator: "\n")
    }
}
