import Guards
import Testing

/// Help written in the source with its own line breaks, made into paragraphs the argument parser
/// wraps at the terminal's width; examples and list items keep their lines.
struct HelpTextTests {
    @Test func theLinesOfAParagraphAreJoined() {
        #expect(
            HelpText.prose("one line\nand the next\n\na second paragraph")
                == "one line and the next\n\na second paragraph")
    }

    @Test func examplesAndListItemsKeepTheirLines() {
        let text = "Run it:\n  bureau up\n  bureau ps\n- a list item\n  that goes on\n- another"
        #expect(HelpText.prose(text) == "Run it:\n  bureau up\n  bureau ps\n- a list item\n  that goes on\n- another")
    }
}
