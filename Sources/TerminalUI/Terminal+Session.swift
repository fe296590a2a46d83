extension Terminal {
    /// Runs `body` with the terminal in full-screen mode and its keys and resizes coming in;
    /// the terminal is restored and input stopped when `body` returns or throws.
    public static func withFullScreen<Result>(
        colorMode: ColorMode, _ body: (Terminal, TerminalInput) async throws(TerminalError) -> Result
    ) async throws(TerminalError) -> Result {
        let terminal = Terminal(colorMode: colorMode)
        try terminal.enter()
        defer { terminal.restore() }
        let input = TerminalInput()
        defer { input.stop() }
        return try await body(terminal, input)
    }
}
