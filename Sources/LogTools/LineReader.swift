import Foundation

/// Reads a file line by line without holding all of it; a line longer than its limit is an error.
public struct LineReader {
    private let handle: FileHandle
    private let maxLineBytes: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    private var number = 0

    /// - Parameter maxLineBytes: the longest line read (an exported event of the largest size
    ///   fits in 2 MiB; the default leaves room for hand-written lines).
    public init(_ handle: FileHandle, maxLineBytes: Int = 16 << 20) {
        self.handle = handle
        self.maxLineBytes = maxLineBytes
    }

    /// The next line without its newline; nil at the end.
    public mutating func next() throws -> [UInt8]? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                guard newline - start <= maxLineBytes else { throw LineTooLong(line: number + 1, limit: maxLineBytes) }
                let line = Array(buffer[start..<newline])
                start = newline + 1
                number += 1
                return line
            }
            guard buffer.count - start <= maxLineBytes else {
                throw LineTooLong(line: number + 1, limit: maxLineBytes)
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                guard buffer.count - start <= maxLineBytes else {
                    throw LineTooLong(line: number + 1, limit: maxLineBytes)
                }
                let line = Array(buffer[start...])
                start = buffer.count
                return line
            }
            buffer.removeFirst(start)
            start = 0
            let chunk = try handle.read(upToCount: 1 << 20) ?? Data()
            if chunk.isEmpty { atEnd = true } else { buffer.append(contentsOf: chunk) }
        }
    }
}
