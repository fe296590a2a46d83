/// A key a person pressed, decoded from the bytes a terminal sends.
public enum Key: Sendable, Hashable {
    case character(Character)
    case enter
    case escape
    case backspace
    case tab
    case backTab
    case up, down, left, right
    case home, end, pageUp, pageDown, delete
    /// Control plus a letter, lower case (Ctrl-C is `.control("c")`).
    case control(Character)
    /// A sequence this decoder does not know; ignored by the front-end.
    case unknown
}
