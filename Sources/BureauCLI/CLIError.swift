import ArgumentParser
import Foundation
import Guards

/// A command failed for a reason the person running it can act on; printed as is.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Prints `message` as an error and exits with `code` (64, EX_USAGE, for bad input), without
/// the usage text ArgumentParser adds to validation errors found after parsing.
func usageError(_ message: String, code: Int32 = 64) -> ExitCode {
    FileHandle.standardError.write(Data("Error: \(TerminalText.escaped(message, keepingLineBreaks: true))\n".utf8))
    return ExitCode(code)
}
