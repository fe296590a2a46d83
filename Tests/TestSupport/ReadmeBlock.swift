import Foundation

/// A shell block of README.md, for the tests that run README's steps as written.
public enum ReadmeBlock {
    /// The lines of the first ```` ```sh ```` block after `marker` in README.md; throws naming
    /// what is missing.
    public static func shell(after marker: String) throws -> [String] {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let readme = try String(contentsOf: path, encoding: .utf8)
        guard let heading = readme.range(of: marker),
            let start = readme.range(of: "```sh\n", range: heading.upperBound..<readme.endIndex),
            let end = readme.range(of: "\n```", range: start.upperBound..<readme.endIndex)
        else { throw TestSupportError("README.md has no shell block after '\(marker)'") }
        return readme[start.upperBound..<end.lowerBound].split(separator: "\n").map(String.init)
    }

    /// `line` as a script runs it: its comment off, and a command that follows for ever
    /// (`… -f`, `bureau log tail`) or takes the terminal (`bureau tui`, given one by `script`)
    /// run for 3 s into `follow-INDEX.out`: stopped by the timeout is its success, an exit of
    /// its own before it a failure. A line that is only a comment becomes empty.
    public static func scripted(_ line: String, index: Int) -> String {
        let trimmedLine = line.trimmingCharacters(in: .whitespaces)
        if trimmedLine.hasPrefix("#") { return "" }
        let command = line.range(of: "  # ").map { String(line[..<$0.lowerBound]) } ?? line
        let trimmed = command.trimmingCharacters(in: .whitespaces)
        if trimmed.hasSuffix(" -f") || trimmed == "bureau log tail" {
            return "{ status=0; timeout 3 \(trimmed) > follow-\(index).out || status=$?; [ $status -eq 124 ]; }"
        }
        if trimmed == "bureau tui" {
            // script's input stays open past the timeout: at its end script would send the
            // front-end an EOF, which ends it if it comes before the terminal is raw.
            return "{ status=0; sleep 4 | timeout 3 script -qec '\(trimmed)' /dev/null > follow-\(index).out "
                + "|| status=$?; [ $status -eq 124 ]; }"
        }
        return trimmed
    }
}
