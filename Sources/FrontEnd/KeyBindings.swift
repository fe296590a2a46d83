/// The keys the front-end answers to, as `?` shows them and the README lists them.
public enum KeyBindings {
    public struct Binding: Sendable, Equatable {
        public var keys: String
        public var action: String
    }

    public static let all: [Binding] = [
        Binding(keys: "1 2 3, Tab, ← →", action: "Watchlist, Reservations, Alerts"),
        Binding(keys: "↑ ↓, k j", action: "select a row"),
        Binding(keys: "a", action: "add a pair to the watchlist (picker: base, then quote)"),
        Binding(keys: "d", action: "remove the selected pair (Watchlist)"),
        Binding(keys: "m", action: "set the converter's amount, e.g. 250 or 250 USD"),
        Binding(keys: "r", action: "reserve an amount of the selected pair at its quote"),
        Binding(keys: "c", action: "cancel the selected reservation (Reservations)"),
        Binding(keys: "s", action: "set an alert: pick a pair, then >1.2 or <1.0"),
        Binding(keys: "x", action: "clear the selected alert (Alerts)"),
        Binding(keys: ":", action: "command line: any bureau:// URL; Tab completes"),
        Binding(keys: "type, Backspace", action: "in the picker: filter; Backspace on empty goes back"),
        Binding(keys: "Enter / Esc", action: "confirm / cancel the picker, prompt or command line"),
        Binding(keys: "?", action: "this help (any key closes it)"),
        Binding(keys: "q, Ctrl-C", action: "quit"),
    ]

    /// The bindings as a Markdown table.
    public static var markdown: String {
        (["| key | action |", "|---|---|"] + all.map { "| \($0.keys) | \($0.action) |" }).joined(separator: "\n")
    }
}
