import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Where the supervisor's and its processes' lines go: each process's log file, and the
/// terminal with coloured, aligned name prefixes when there is no front-end.
final class ProcessOutput: Sendable {
    private let directory: String
    private let maxBytes: Int
    private let console: Bool
    private let logger: Logger
    private let colour: Bool
    private let width: Int
    private let files = Mutex<[String: RotatingLogFile]>([:])
    private let terminal = Mutex<Void>(())
    static let palette = [36, 33, 35, 32, 34, 91, 96, 93, 95, 92]

    /// - Parameter logger: where a log file that cannot be opened is said.
    init(directory: String, names: [String], maxBytes: Int, console: Bool, logger: Logger) {
        self.directory = directory
        self.logger = logger
        self.maxBytes = maxBytes
        self.console = console
        let environment = ProcessInfo.processInfo.environment
        colour = isatty(STDOUT_FILENO) == 1 && environment["NO_COLOR"] == nil && environment["TERM"] != "dumb"
        width = (names + ["supervisor"]).map(\.count).max() ?? 10
    }

    func path(of name: String) -> String { directory + "/\(name).log" }

    /// Writes one line of `name`'s output (or of the supervisor's, as "supervisor").
    func line(_ name: String, _ text: String, index: Int? = nil) {
        let file = files.withLock { files in
            if let file = files[name] { return file }
            let file = RotatingLogFile(path: path(of: name), maxBytes: maxBytes, logger: logger)
            files[name] = file
            return file
        }
        file.write(Array((text + "\n").utf8))
        guard console else { return }
        let padded = name.padding(toLength: width, withPad: " ", startingAt: 0)
        let prefix: String
        if colour {
            let code = index.map { Self.palette[$0 % Self.palette.count] } ?? 1
            prefix = "\u{1B}[\(code)m\(padded) |\u{1B}[0m "
        } else {
            prefix = "\(padded) | "
        }
        let bytes = Array((prefix + text + "\n").utf8)
        terminal.withLock { _ in
            _ = bytes.withUnsafeBytes { Glibc.write(STDOUT_FILENO, $0.baseAddress, $0.count) }
        }
    }

    /// Reads `fd` line by line on a thread of its own until end-of-file, then closes it; the
    /// semaphore is signalled then, when every line is in the log file.
    func follow(_ fd: Int32, name: String, index: Int) -> DispatchSemaphore {
        let drained = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer { drained.signal() }
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 16 << 10)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                pending += buffer[0..<count]
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    self.line(name, String(decoding: pending[..<newline], as: UTF8.self), index: index)
                    pending.removeSubrange(...newline)
                }
            }
            if !pending.isEmpty { self.line(name, String(decoding: pending, as: UTF8.self), index: index) }
            close(fd)
        }
        return drained
    }
}
