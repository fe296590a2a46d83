import Guards

/// Every line the CLI prints goes through here rather than `Swift.print`: the same output, with
/// every control character but newlines and tabs escaped (``TerminalText``). What the CLI
/// prints holds what peers, files and payloads said (type names, reasons, messages, keys'
/// names, URLs), and a terminal must never run the escape sequences they carry. Fields that
/// could forge a line escape their newlines where they are formatted.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    let text = items.map { String(describing: $0) }.joined(separator: separator)
    Swift.print(TerminalText.escaped(text, keepingLineBreaks: true), terminator: terminator)
}
