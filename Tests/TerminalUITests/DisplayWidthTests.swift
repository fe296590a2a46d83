import TerminalUI
import Testing

/// Columns for the characters a bureau shows: currency symbols, box drawing, CJK, emoji, accents.
struct DisplayWidthTests {
    @Test func currencySymbolsAndBoxDrawingTakeOneColumn() {
        for character: Character in ["€", "£", "¥", "₹", "─", "│", "▲", "▼", "a"] {
            #expect(DisplayWidth.of(character) == 1, "\(character)")
        }
    }

    @Test func wideCharactersAndEmojiTakeTwoColumns() {
        for character: Character in ["円", "元", "한", "Ｆ", "💶", "☀️"] {
            #expect(DisplayWidth.of(character) == 2, "\(character)")
        }
        #expect(DisplayWidth.of("日本円 JPY") == 10)
    }

    @Test func combiningMarksAddNothing() {
        #expect(DisplayWidth.of("e\u{301}") == 1)
        #expect(DisplayWidth.of("Zu\u{308}rich") == 6)
    }

    @Test func fittingCutsWithAnEllipsisAndNeverSplitsAWideCharacter() {
        #expect(DisplayWidth.fit("EUR/USD", to: 5) == "EUR/…")
        #expect(DisplayWidth.fit("日本円", to: 4) == "日… ")
        #expect(DisplayWidth.fit("€1", to: 4) == "€1  ")
    }
}
