import TerminalUI

/// The styles screens use, named by meaning; every meaning also shows in text (arrows, marks,
/// words), since colour may be off.
enum Theme {
    static let up = Style.foreground(.green, bold: true)
    static let down = Style.foreground(.red, bold: true)
    static let muted = Style.dim
    static let title = Style(foreground: .cyan, bold: true)
    static let activeTab = Style(foreground: .black, background: .cyan, bold: true)
    static let connected = Style.foreground(.green)
    static let disconnected = Style(foreground: .white, background: .red, bold: true)
    static let error = Style.foreground(.red)
    static let pending = Style.foreground(.yellow)
    static let success = Style.foreground(.green)
    static let triggered = Style(foreground: .white, background: .red, bold: true)
    static let overlay = Style.foreground(.cyan)
}
