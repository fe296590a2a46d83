import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the terminal reports: keys and resizes.
public enum TerminalEvent: Sendable, Equatable {
    case keys([Key])
    case resized(TerminalSize)
    /// The input reached its end (the terminal went away).
    case closed
}
