import Foundation
import Guards
import Synchronization
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// The stream people would reach for instead of Bureau: Debian's `redis-server`, started on a
/// unix socket in a scratch directory with `appendonly yes` and `appendfsync always`, a producer
/// pipelining `XADD` and a consumer reading the same stream with `XREAD BLOCK` at the same time.
///
/// The producer keeps `inFlight` pipelines of `batch` commands outstanding (as the bus benchmark
/// keeps publish requests outstanding); the figure is entries per second until the consumer has
/// read the last one.
struct RedisStreamsBaseline {
    var server: String
    var events: Int
    var valueBytes: Int
    var batch: Int
    var inFlight: Int

    /// `redis-server` on the PATH, or nil (install it with `tools/setup --bench`).
    static func findServer() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") + ["/usr/sbin", "/usr/bin"] {
            let candidate = "\(directory)/redis-server"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Entries per second, producer → fsynced append-only file → consumer.
    func run(in directory: String) throws -> Double {
        let socketPath = directory + "/redis.sock"
        var spawn = ProcessSpawn(
            executable: server,
            arguments: [
                "--port", "0", "--unixsocket", socketPath, "--dir", directory, "--appendonly", "yes",
                "--appendfsync", "always", "--save", "", "--daemonize", "no", "--loglevel", "warning",
                "--logfile", directory + "/redis.log",
            ])
        spawn.fileActions = [
            .open(0, path: "/dev/null", flags: O_RDONLY), .open(1, path: "/dev/null", flags: O_WRONLY),
            .open(2, path: "/dev/null", flags: O_WRONLY),
        ]
        let process = try BenchmarkChild(spawn)
        // SIGKILL: the child inherits this process's blocked signals, so a SIGTERM may never
        // reach it; its data is scratch.
        defer { process.end(SIGKILL) }
        let producer = try RedisConnection(socketPath: socketPath, waitingFor: process)
        let consumer = try RedisConnection(socketPath: socketPath, waitingFor: process)
        let stream = "bench"
        let value = [UInt8](repeating: 0x61, count: valueBytes)
        var pipeline: [UInt8] = []
        for _ in 0..<batch { pipeline += RESP.command(["XADD", stream, "*", "e"], value: value) }
        let total = events
        let batches = (total + batch - 1) / batch
        let lastBatch = total - (batches - 1) * batch
        var lastPipeline: [UInt8] = []
        for _ in 0..<lastBatch { lastPipeline += RESP.command(["XADD", stream, "*", "e"], value: value) }

        let window = DispatchSemaphore(value: inFlight)
        let failure = Mutex<String?>(nil)
        let started = ContinuousClock.now
        let writer = try OwnThread(name: "redis-xadd") { [pipeline, lastPipeline] in
            for index in 0..<batches {
                window.wait()
                let bytes = index == batches - 1 ? lastPipeline : pipeline
                do { try producer.write(bytes) } catch {
                    failure.withLock { $0 = $0 ?? "XADD: \(error)" }
                    return
                }
            }
        }
        let replies = try OwnThread(name: "redis-replies") {
            do {
                for index in 0..<batches {
                    let count = index == batches - 1 ? lastBatch : batch
                    for _ in 0..<count { try producer.skipReply() }
                    window.signal()
                }
            } catch {
                failure.withLock { $0 = $0 ?? "XADD replies: \(error)" }
                for _ in 0..<batches { window.signal() }
            }
        }
        var read = 0
        var lastID = "0-0"
        do {
            while read < total {
                // A bounded block, so that a failed producer ends the loop instead of hanging it.
                if failure.withLock({ $0 }) != nil { break }
                try consumer.write(
                    RESP.command(["XREAD", "COUNT", "10000", "BLOCK", "2000", "STREAMS", stream, lastID]))
                let entries = try consumer.readStreamEntries()
                read += entries.count
                if let last = entries.last { lastID = last }
            }
        } catch {
            failure.withLock { $0 = $0 ?? "XREAD: \(error)" }
        }
        let elapsed = (ContinuousClock.now - started).inSeconds
        // The consumer can read the last entry before the producer has read the last replies:
        // the connection is shut only after them, unless something failed (then it wakes them).
        if failure.withLock({ $0 }) != nil { producer.shutdown() }
        writer.join()
        replies.join()
        producer.shutdown()
        consumer.shutdown()
        if let problem = failure.withLock({ $0 }) {
            throw CLIFailure("redis-server baseline failed: \(problem)")
        }
        return Double(read) / elapsed
    }
}

/// Encodes commands in RESP, the protocol redis-server speaks.
enum RESP {
    /// `*N` followed by each argument as a bulk string, then `value` (if any) as the last one.
    static func command(_ arguments: [String], value: [UInt8]? = nil) -> [UInt8] {
        var bytes = Array("*\(arguments.count + (value == nil ? 0 : 1))\r\n".utf8)
        for argument in arguments {
            let utf8 = Array(argument.utf8)
            bytes += Array("$\(utf8.count)\r\n".utf8) + utf8 + [13, 10]
        }
        if let value { bytes += Array("$\(value.count)\r\n".utf8) + value + [13, 10] }
        return bytes
    }
}

/// One blocking connection to redis-server over a unix socket, with a read buffer.
final class RedisConnection: @unchecked Sendable {
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var start = 0

    /// Connects to `socketPath`, retrying while the freshly started `process` creates it (up to 10 s).
    init(socketPath: String, waitingFor process: BenchmarkChild) throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { throw CLIFailure("socket(AF_UNIX): errno \(errno)") }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let path = Array(socketPath.utf8)
            guard path.count < MemoryLayout.size(ofValue: address.sun_path) else {
                throw CLIFailure("the socket path \(socketPath) is too long for a unix socket")
            }
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (index, byte) in path.enumerated() { raw[index] = byte }
            }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            if connected == 0 {
                self.descriptor = descriptor
                return
            }
            close(descriptor)
            if let ended = process.exit {
                let log = URL(fileURLWithPath: socketPath).deletingLastPathComponent().appendingPathComponent(
                    "redis.log")
                // What it said, if anything: the failure is reported either way.
                let said = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                throw CLIFailure("redis-server \(ended.text) before accepting connections: \(said)")
            }
            guard ContinuousClock.now < deadline else {
                throw CLIFailure("redis-server did not create \(socketPath) within 10 s")
            }
            // Polling for a socket another process creates: there is no event to await.
            usleep(20_000)
        }
    }

    deinit { close(descriptor) }

    /// Stops both directions, waking a thread blocked in a read.
    func shutdown() { _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR)) }

    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                Glibc.write(descriptor, raw.baseAddress.map { $0 + offset }, raw.count - offset)
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw CLIFailure("write to redis-server failed: errno \(errno)") }
            offset += written
        }
    }

    /// Reads one reply of any kind and discards it; an error reply throws.
    func skipReply() throws {
        let line = try readLine()
        guard let kind = line.first else { throw CLIFailure("an empty reply line") }
        switch kind {
        case UInt8(ascii: "+"), UInt8(ascii: ":"): return
        case UInt8(ascii: "-"): throw CLIFailure("redis-server: \(String(decoding: line.dropFirst(), as: UTF8.self))")
        case UInt8(ascii: "$"):
            let length = try number(line)
            if length >= 0 { _ = try readBytes(length + 2) }
        case UInt8(ascii: "*"):
            let count = try number(line)
            for _ in 0..<max(0, count) { try skipReply() }
        default: throw CLIFailure("an unexpected reply: \(String(decoding: line, as: UTF8.self))")
        }
    }

    /// Reads an `XREAD` reply for one stream and returns its entries' ids, in order.
    func readStreamEntries() throws -> [String] {
        let streams = try number(try expect("*", try readLine()))
        if streams == -1 { return [] }  // Nothing new within the block time.
        guard streams == 1 else { throw CLIFailure("XREAD returned \(streams) streams, expected 1") }
        guard try number(try expect("*", try readLine())) == 2 else { throw CLIFailure("a malformed XREAD reply") }
        try skipReply()  // The stream's name.
        let count = try number(try expect("*", try readLine()))
        var ids: [String] = []
        ids.reserveCapacity(count)
        for _ in 0..<count {
            guard try number(try expect("*", try readLine())) == 2 else { throw CLIFailure("a malformed entry") }
            let length = try number(try expect("$", try readLine()))
            ids.append(String(decoding: try readBytes(length + 2).dropLast(2), as: UTF8.self))
            try skipReply()  // The entry's fields and values.
        }
        return ids
    }

    private func expect(_ kind: Character, _ line: ArraySlice<UInt8>) throws -> ArraySlice<UInt8> {
        guard line.first == kind.asciiValue else {
            throw CLIFailure("expected '\(kind)', redis-server said \(String(decoding: line, as: UTF8.self))")
        }
        return line
    }

    private func number(_ line: ArraySlice<UInt8>) throws -> Int {
        guard let value = Int(String(decoding: line.dropFirst(), as: UTF8.self)) else {
            throw CLIFailure("not a number: \(String(decoding: line, as: UTF8.self))")
        }
        return value
    }

    /// The next line, without its CRLF.
    private func readLine() throws -> ArraySlice<UInt8> {
        while true {
            if let end = buffer[start...].firstIndex(of: 10), end > start, buffer[end - 1] == 13 {
                let line = buffer[start..<(end - 1)]
                start = end + 1
                return line
            }
            try fill()
        }
    }

    private func readBytes(_ count: Int) throws -> ArraySlice<UInt8> {
        while buffer.count - start < count { try fill() }
        defer { start += count }
        return buffer[start..<(start + count)]
    }

    private func fill() throws {
        if start > 0 {
            buffer.removeFirst(start)
            start = 0
        }
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { return }
        guard count > 0 else { throw CLIFailure("redis-server closed the connection") }
        buffer += chunk[0..<count]
    }
}
