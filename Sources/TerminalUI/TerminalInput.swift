import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads the terminal's input and resizes on a thread of its own and delivers them as a stream.
///
/// SIGWINCH is caught by a handler that only writes a byte to a pipe (the one thing a signal
/// handler may safely do); the reading thread polls that pipe beside standard input.
public final class TerminalInput: Sendable {
    public let events: AsyncStream<TerminalEvent>
    private let continuation: AsyncStream<TerminalEvent>.Continuation
    private let stopPipe: (read: Int32, write: Int32)

    public init(fd: Int32 = STDIN_FILENO) {
        (events, continuation) = AsyncStream.makeStream(of: TerminalEvent.self)
        var ends: [Int32] = [-1, -1]
        _ = pipe(&ends)
        stopPipe = (ends[0], ends[1])
        TerminalSignals.installResizeHandler()
        let continuation = continuation
        let stop = stopPipe.read
        let thread = Thread {
            Self.readLoop(fd: fd, stop: stop, continuation: continuation)
        }
        thread.name = "terminal-input"
        thread.start()
    }

    /// Ends the reading thread and the stream.
    public func stop() {
        var byte: UInt8 = 1
        _ = write(stopPipe.write, &byte, 1)
    }

    private static func readLoop(fd: Int32, stop: Int32, continuation: AsyncStream<TerminalEvent>.Continuation) {
        let decoder = KeyDecoder()
        let resize = TerminalSignals.resizePipe.read
        var buffer = [UInt8](repeating: 0, count: 4096)
        var descriptors = [
            pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: resize, events: Int16(POLLIN), revents: 0),
            pollfd(fd: stop, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            for index in descriptors.indices { descriptors[index].revents = 0 }
            let ready = poll(&descriptors, nfds_t(descriptors.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            if descriptors[2].revents != 0 { break }
            if descriptors[1].revents != 0 {
                _ = read(resize, &buffer, buffer.count)
                if let size = TerminalSize.of() { continuation.yield(.resized(size)) }
            }
            if descriptors[0].revents != 0 {
                let count = read(fd, &buffer, buffer.count)
                if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                guard count > 0 else {
                    continuation.yield(.closed)
                    break
                }
                continuation.yield(.keys(decoder.decode(Array(buffer[0..<count]))))
            }
        }
        continuation.finish()
    }
}
