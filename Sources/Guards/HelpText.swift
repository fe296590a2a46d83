/// Help text as written in the source, made to wrap well in any terminal.
public enum HelpText {
    /// Joins the lines of each paragraph so that the argument parser can wrap them at the
    /// terminal's width; blank lines, indented lines (examples) and list items (`- `, `* `)
    /// keep their own lines.
    public static func prose(_ text: String) -> String {
        var result: [String] = []
        var joining = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let startsOwnLine =
                line.isEmpty || line.first == " " || line.hasPrefix("- ") || line.hasPrefix("* ")
            if joining, !startsOwnLine, let last = result.popLast() {
                result.append(last + " " + line)
            } else {
                result.append(String(line))
            }
            // A paragraph line or a list item goes on in the next unindented line.
            joining = !line.isEmpty && line.first != " "
        }
        return result.joined(separator: "\n")
    }
}
