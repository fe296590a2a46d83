import TerminalUI

/// A one-line text editor: characters append, Backspace deletes the last one.
public struct TextField: Sendable, Equatable {
    public var text: String

    public init(_ text: String = "") {
        self.text = text
    }

    /// Applies an editing key; returns false for keys it does not edit with.
    public mutating func edit(_ key: Key) -> Bool {
        switch key {
        case .character(let character):
            text.append(character)
            return true
        case .backspace:
            if !text.isEmpty { text.removeLast() }
            return true
        case .control("u"):
            text = ""
            return true
        default:
            return false
        }
    }
}
