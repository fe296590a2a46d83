import TerminalUI
import Testing

/// Drawing into the virtual screen: clipping, wide characters, boxes, and the text a snapshot holds.
struct CellBufferTests {
    @Test func aWideCharacterFillsTwoCellsAndTheTextShowsItOnce() {
        var buffer = CellBuffer(width: 8, height: 1)
        let end = buffer.write("円€x", x: 1, y: 0)
        #expect(end == 5)
        #expect(buffer[1, 0].width == 2)
        #expect(buffer[2, 0].isContinuation)
        #expect(buffer.text == " 円€x")
    }

    @Test func aWideCharacterThatDoesNotFitBecomesASpace() {
        var buffer = CellBuffer(width: 3, height: 1)
        buffer.write("ab円", x: 0, y: 0)
        #expect(buffer.text == "ab")
        #expect(!buffer[2, 0].isContinuation)
    }

    @Test func overwritingHalfAWideCharacterClearsTheOtherHalf() {
        var buffer = CellBuffer(width: 4, height: 1)
        buffer.write("円円", x: 0, y: 0)
        buffer.write("x", x: 1, y: 0)
        #expect(buffer.text == " x円")
    }

    @Test func writingIsClippedToTheRectangle() {
        var buffer = CellBuffer(width: 10, height: 3)
        buffer.write("abcdefgh", x: 2, y: 1, clip: Rect(x: 3, y: 1, width: 3, height: 1))
        #expect(buffer.text == "\n   bcd\n")
        buffer.write("zz", x: 0, y: 2, clip: Rect(x: 0, y: 0, width: 10, height: 2))
        #expect(buffer.text == "\n   bcd\n")
    }

    @Test func controlCharactersAreShownAsQuestionMarks() {
        var buffer = CellBuffer(width: 5, height: 1)
        buffer.write("a\u{1B}b", x: 0, y: 0)
        #expect(buffer.text == "a?b")
    }

    @Test func aBoxHasItsTitleInTheTopEdge() {
        var buffer = CellBuffer(width: 12, height: 3)
        buffer.box(buffer.bounds, title: "Keys")
        #expect(buffer.text == "┌ Keys ────┐\n│          │\n└──────────┘")
    }
}
