import Foundation
import LogTools
import TestSupport
import Testing

/// Reading an export line by line, whatever its size, with a bound on one line.
// Reads files of many megabytes: on threads of its own, off the cooperative pool.
@Suite(.ownThreads)
struct LineReaderTests {
    static func reader(
        _ text: String, in directory: TemporaryDirectory, maxLineBytes: Int = 1 << 20
    ) throws -> LineReader {
        let path = directory.file("export.jsonl")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let handle = try #require(FileHandle(forReadingAtPath: path))
        return LineReader(handle, maxLineBytes: maxLineBytes)
    }

    static func lines(_ reader: inout LineReader) throws -> [String] {
        var lines: [String] = []
        while let line = try reader.next() { lines.append(String(decoding: line, as: UTF8.self)) }
        return lines
    }

    @Test func linesComeWithoutTheirNewlineAndALastLineWithoutOneIsKept() throws {
        let directory = try TemporaryDirectory("lines")
        var reader = try Self.reader("one\ntwo\n\nthree", in: directory)
        #expect(try Self.lines(&reader) == ["one", "two", "", "three"])
    }

    @Test func linesLongerThanTheReadChunkArriveWhole() throws {
        let long = String(repeating: "x", count: 3 << 20)
        let directory = try TemporaryDirectory("lines")
        var reader = try Self.reader("a\n\(long)\nb\n", in: directory, maxLineBytes: 4 << 20)
        #expect(try Self.lines(&reader) == ["a", long, "b"])
    }

    @Test func aLastLineWithoutANewlineOverTheLimitIsAnErrorToo() throws {
        let directory = try TemporaryDirectory("lines")
        var reader = try Self.reader("ok\n" + String(repeating: "z", count: 1001), in: directory, maxLineBytes: 1000)
        #expect(try reader.next().map { String(decoding: $0, as: UTF8.self) } == "ok")
        #expect {
            _ = try reader.next()
        } throws: { error in
            "\(error)" == "line 2 is longer than 1000 bytes"
        }
    }

    @Test func aLineOverTheLimitIsAnErrorNamingItsNumber() throws {
        let directory = try TemporaryDirectory("lines")
        var reader = try Self.reader(
            "short\n" + String(repeating: "y", count: 5000) + "\n", in: directory, maxLineBytes: 1000)
        #expect(try reader.next().map { String(decoding: $0, as: UTF8.self) } == "short")
        #expect {
            _ = try reader.next()
        } throws: { error in
            "\(error)" == "line 2 is longer than 1000 bytes"
        }
    }
}
