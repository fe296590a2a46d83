import TerminalUI
import Testing

/// Bytes from a terminal decoded into keys.
struct KeyDecoderTests {
    let decoder = KeyDecoder()

    @Test func textArrowsAndControlKeys() {
        #expect(
            decoder.decode(Array("a€\r\t\u{7F}".utf8)) == [.character("a"), .character("€"), .enter, .tab, .backspace])
        #expect(decoder.decode(Array("\u{1B}[A\u{1B}[B\u{1B}OC\u{1B}[D".utf8)) == [.up, .down, .right, .left])
        #expect(decoder.decode([3]) == [.control("c")])
        #expect(decoder.decode(Array("\u{1B}[3~\u{1B}[5~\u{1B}[Z".utf8)) == [.delete, .pageUp, .backTab])
    }

    @Test func aLoneEscapeIsTheEscapeKey() {
        #expect(decoder.decode([0x1B]) == [.escape])
        #expect(decoder.decode([0x1B, UInt8(ascii: "x")]) == [.escape, .character("x")])
    }
}
