import Guards
import Testing

struct TerminalTextTests {
    @Test func controlCharactersAreWrittenAsEscapes() {
        #expect(TerminalText.escaped("pub\u{1B}[2Jlish") == "pub\\u{1B}[2Jlish")
        #expect(TerminalText.escaped("a\nforged line\r") == "a\\nforged line\\r")
        #expect(TerminalText.escaped("bell\u{07}\u{7F}\u{0}") == "bell\\u{7}\\u{7F}\\u{0}")
        // C1: U+009B is CSI to a terminal that reads 8-bit controls.
        #expect(TerminalText.escaped("\u{9B}31m") == "\\u{9B}31m")
        // A right-to-left override would show "txt.exe" as something else.
        #expect(TerminalText.escaped("\u{202E}exe.txt") == "\\u{202E}exe.txt")
    }

    @Test func ordinaryTextIsKeptAsItIs() {
        for text in ["", "bureau.watchlist.PairAdded", "1 000,50 €", "東京 ✓ 🙂", "tab\\there", "C:\\path"] {
            #expect(TerminalText.escaped(text) == text)
        }
    }

    @Test func aListingKeepsItsOwnLineBreaksButNotTheControlsInIt() {
        #expect(
            TerminalText.escaped("row 1\trow\n\u{1B}]0;title\u{07}", keepingLineBreaks: true)
                == "row 1\trow\n\\u{1B}]0;title\\u{7}")
    }
}
