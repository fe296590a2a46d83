#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The controlling terminal in full-screen mode: raw input, the alternate screen, no cursor.
///
/// ``enter()`` saves the settings and installs handlers so that a quit signal (SIGINT,
/// SIGTERM, SIGHUP) or a crash (SIGSEGV, SIGILL, SIGTRAP, SIGABRT…) puts the terminal back
/// before the process ends. Call ``restore()`` on a normal exit; it is idempotent.
public final class Terminal: @unchecked Sendable {
    public let colorMode: ColorMode
    private var entered = false

    public init(colorMode: ColorMode) {
        self.colorMode = colorMode
    }

    /// Whether standard input and output are both terminals.
    public static var isInteractive: Bool { isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 }

    public var size: TerminalSize { TerminalSize.of() ?? TerminalSize(columns: 80, rows: 24) }

    /// Switches to raw mode and the alternate screen; throws if standard input is not a terminal.
    public func enter() throws(TerminalError) {
        guard !entered else { return }
        var settings = termios()
        guard tcgetattr(STDIN_FILENO, &settings) == 0 else { throw TerminalError.notATerminal }
        TerminalSignals.savedSettings = settings
        TerminalSignals.hasSavedSettings = true
        // Leave the alternate screen, show the cursor, reset the style.
        TerminalSignals.restoreBytes = Array("\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l".utf8)
        TerminalSignals.installExitHandlers()
        var raw = settings
        // Like cfmakeraw, but keeping output post-processing off too: the renderer positions every cell.
        raw.c_iflag &= ~tcflag_t(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON)
        raw.c_oflag &= ~tcflag_t(OPOST)
        raw.c_lflag &= ~tcflag_t(ECHO | ECHONL | ICANON | ISIG | IEXTEN)
        raw.c_cflag &= ~tcflag_t(CSIZE | PARENB)
        raw.c_cflag |= tcflag_t(CS8)
        withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
            bytes[Int(VMIN)] = 1
            bytes[Int(VTIME)] = 0
        }
        guard tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0 else { throw TerminalError.notATerminal }
        entered = true
        write(Array("\u{1B}[?1049h\u{1B}[?25l\u{1B}[2J".utf8))
    }

    /// Puts the terminal back as ``enter()`` found it.
    public func restore() {
        guard entered else { return }
        entered = false
        TerminalSignals.restoreNow()
    }

    /// Writes all of `bytes` to standard output.
    public func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { raw in
                systemWrite(STDOUT_FILENO, raw.baseAddress, raw.count)
            }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return
            }
            offset += written
        }
    }

    deinit {
        restore()
    }
}

#if canImport(Glibc)
    private let systemWrite = Glibc.write
#elseif canImport(Darwin)
    private let systemWrite = Darwin.write
#endif
