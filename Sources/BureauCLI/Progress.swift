import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Progress of a long operation on stderr, only when stderr is a terminal.
final class Progress {
    private let label: String
    private let enabled = isatty(2) == 1
    private var lastShown = ContinuousClock.now
    private var shown = false

    init(label: String) {
        self.label = label
    }

    /// Shows `count` at most ten times a second.
    func update(_ count: UInt64, of total: UInt64? = nil) {
        guard enabled, ContinuousClock.now - lastShown >= .milliseconds(100) else { return }
        lastShown = .now
        shown = true
        var text = "\r\(label): \(count)"
        if let total, total > 0 { text += " of \(total) (\(count * 100 / total)%)" }
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// Clears the progress line.
    func finish() {
        guard enabled, shown else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
