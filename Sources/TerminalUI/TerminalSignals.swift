#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process-wide state signal handlers need: the terminal settings to restore and the bytes
/// that leave the alternate screen, kept where an async-signal-safe handler can reach them.
///
/// Signal handlers cannot capture context, so this state is global by necessity; it is written
/// before the handlers are installed and only read after.
enum TerminalSignals {
    nonisolated(unsafe) static var savedSettings = termios()
    nonisolated(unsafe) static var hasSavedSettings = false
    nonisolated(unsafe) static var restoreBytes: [UInt8] = []
    nonisolated(unsafe) static var resizePipe: (read: Int32, write: Int32) = (-1, -1)
    nonisolated(unsafe) static var resizeInstalled = false
    nonisolated(unsafe) static var exitInstalled = false

    /// Puts the terminal back; safe inside a signal handler (fcntl, write, tcsetattr, tcflush only).
    ///
    /// It must never block: after a hang-up nobody drains the terminal, so the write is
    /// non-blocking and the settings apply at once rather than after output drains.
    static func restoreNow() {
        let flags = fcntl(STDOUT_FILENO, F_GETFL)
        if flags >= 0 { _ = fcntl(STDOUT_FILENO, F_SETFL, flags | O_NONBLOCK) }
        restoreBytes.withUnsafeBytes { raw in
            _ = write(STDOUT_FILENO, raw.baseAddress, raw.count)
        }
        if flags >= 0 { _ = fcntl(STDOUT_FILENO, F_SETFL, flags) }
        if hasSavedSettings {
            _ = tcsetattr(STDIN_FILENO, TCSANOW, &savedSettings)
            _ = tcflush(STDIN_FILENO, TCIFLUSH)
        }
    }

    static func installResizeHandler() {
        guard !resizeInstalled else { return }
        resizeInstalled = true
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        resizePipe = (ends[0], ends[1])
        install(SIGWINCH) { _ in
            var byte: UInt8 = 1
            _ = write(TerminalSignals.resizePipe.write, &byte, 1)
        }
    }

    /// On a quit signal: restore and exit with 128 + the signal. On a crash: restore, then let
    /// the signal's default action end the process (so a core dump or crash report still happens).
    static func installExitHandlers() {
        guard !exitInstalled else { return }
        exitInstalled = true
        for quitting in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] {
            install(quitting) { signal in
                TerminalSignals.restoreNow()
                _exit(128 + signal)
            }
        }
        for crashing in [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE] {
            install(crashing, flags: Int32(bitPattern: UInt32(SA_RESETHAND))) { signal in
                TerminalSignals.restoreNow()
                _ = raise(signal)
            }
        }
    }

    private static func install(
        _ signal: Int32, flags: Int32 = 0, handler: @escaping @convention(c) (Int32) -> Void
    ) {
        var action = sigaction()
        #if canImport(Glibc)
            action.__sigaction_handler.sa_handler = handler
        #else
            action.__sigaction_u.__sa_handler = handler
        #endif
        action.sa_flags = flags | Int32(SA_RESTART)
        sigemptyset(&action.sa_mask)
        _ = sigaction(signal, &action, nil)
    }
}
