/// One of the sixteen colours every colour terminal has; the terminal's theme decides the shade.
public enum Color: UInt8, Sendable, Hashable, CaseIterable {
    case black, red, green, yellow, blue, magenta, cyan, white
    case brightBlack, brightRed, brightGreen, brightYellow, brightBlue, brightMagenta, brightCyan, brightWhite

    /// The SGR parameter that sets it as the foreground.
    var foregroundCode: Int { rawValue < 8 ? 30 + Int(rawValue) : 90 + Int(rawValue) - 8 }
    /// The SGR parameter that sets it as the background.
    var backgroundCode: Int { rawValue < 8 ? 40 + Int(rawValue) : 100 + Int(rawValue) - 8 }
}
