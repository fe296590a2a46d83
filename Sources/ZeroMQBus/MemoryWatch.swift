import EventLog
import Guards
import Logging
import Synchronization
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// Samples the daemon's anonymous resident memory on a thread of its own, every 5 to 100 ms as
/// ``MemoryGuard/wait(after:)`` says (the nearer the limit, the more often), and, when the guard
/// says so, asks the loops that own the sockets to drop every connection (``SocketRenewal``).
/// It reads `/proc/self/statm` (one `pread` a sample).
final class MemoryWatch: @unchecked Sendable {
    private let statm: Int32
    private let pageSize: Int
    private let renewals: [WakeSignal]
    private let stop: WakeSignal
    private let metrics: BusMetrics
    private let logger: Logger
    private var policy: MemoryGuard

    /// Watches memory against `limit` bytes; rings each of `renewals` when connections are to be
    /// dropped; stops when `stop` rings (it is never drained here: other loops hear it too).
    init(limit: Int, renewals: [WakeSignal], stop: WakeSignal, metrics: BusMetrics, logger: Logger) {
        // -1 if it cannot be opened: ``run()`` says so.
        statm = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        self.renewals = renewals
        self.stop = stop
        self.metrics = metrics
        self.logger = logger
        policy = MemoryGuard(limit: limit)
    }

    deinit {
        if statm >= 0 { close(statm) }
    }

    /// Anonymous resident memory in bytes: `resident - shared` of `/proc/self/statm` (pages
    /// backed by files, the binary and its libraries, are shared); nil if it cannot be read.
    func anonymousResident() -> Int? {
        guard statm >= 0 else { return nil }
        // Parsed in place, with nothing allocated: it runs up to 200 times a second for as long as
        // the daemon does (splitting into Strings cost the test suite's daemons seconds of CPU).
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { buffer -> Int? in
            let count = pread(statm, buffer.baseAddress, buffer.count, 0)
            guard count > 0 else { return nil }
            // "size resident shared text lib data dt", in pages.
            var field = 0
            var value = 0
            var digits = 0
            var resident = 0
            for byte in buffer[0..<count] {
                if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                    // 15 digits of pages times the page size stays far inside an Int.
                    guard digits < 15 else { return nil }
                    value = value * 10 + Int(byte - UInt8(ascii: "0"))
                    digits += 1
                    continue
                }
                guard byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n"), digits > 0 else { return nil }
                if field == 1 { resident = value }
                if field == 2 { return max(0, resident - value) * pageSize }
                field += 1
                value = 0
                digits = 0
            }
            return nil
        }
    }

    /// Samples until the stop signal rings.
    func run() {
        var poller = ZMQPoller()
        let stopItem = poller.add(fileDescriptor: stop.fileDescriptor)
        let clock = ContinuousClock()
        var unreadable = false
        var wait = MemoryGuard.shortestWait
        while true {
            do {
                try poller.poll(timeout: Int(wait.inMilliseconds))
            } catch {
                logger.error("the memory watch stops: it cannot wait", metadata: ["bus.error": "\(error)"])
                return
            }
            if poller.isReadable(stopItem) { return }
            guard let resident = anonymousResident() else {
                if !unreadable {
                    unreadable = true
                    logger.error("the memory watch cannot read /proc/self/statm: memory is not bounded")
                }
                continue
            }
            wait = policy.wait(after: resident)
            guard policy.sample(resident: resident, at: clock.now) == .dropConnections else { continue }
            metrics.memoryDrops.increment()
            logger.error(
                "the daemon's memory is over its limit: every connection is dropped, with what libzmq was receiving",
                metadata: [
                    "bus.memory_mib": "\(resident >> 20)", "bus.memory_limit_mib": "\(policy.limit >> 20)",
                    "bus.memory_drops": "\(policy.drops)",
                ])
            for renewal in renewals { renewal.ring() }
        }
    }
}

/// Drops every connection of some sockets by unbinding and binding each endpoint again: libzmq
/// ends the connections a listener accepted with it, and the messages they were still receiving.
/// Run by the thread that owns the sockets, when ``signal`` rings.
struct SocketRenewal {
    let signal: WakeSignal
    /// Each socket with an endpoint it is bound to, as bound (a TCP port resolved).
    let bound: [(ZMQSocket, String)]

    /// Drops the connections, then hands what their messages held back to the system. Throws
    /// if an endpoint cannot be bound again: the daemon would go on deaf on it, so it stops
    /// instead (and its supervisor starts it again).
    func perform(logger: Logger) throws {
        signal.drain()
        for (socket, endpoint) in bound {
            do {
                try socket.unbind(endpoint)
            } catch {
                // Not bound (an earlier bind failed?): bound again below all the same.
                logger.error(
                    "an endpoint could not be unbound to drop its connections",
                    metadata: ["bus.endpoint": "\(endpoint)", "bus.error": "\(error)"])
            }
            do {
                try Self.bind(socket, endpoint)
            } catch {
                logger.critical(
                    "an endpoint could not be bound again after its connections were dropped; the bus stops",
                    metadata: ["bus.endpoint": "\(endpoint)", "bus.error": "\(error)"])
                throw error
            }
            do {
                try OwnerOnly.restrictSocket(of: endpoint)
            } catch {
                // The socket file made again keeps the umask's mode; the run directory,
                // owner-only, still keeps others out, so the bus goes on, said.
                logger.error(
                    "an endpoint's socket file bound again could not be made owner-only",
                    metadata: ["bus.endpoint": "\(endpoint)", "bus.error": "\(error)"])
            }
        }
        // libzmq's I/O thread frees the messages as the connections end, a moment later.
        usleep(20_000)
        HeapMemory.releaseFreed()
    }

    /// Binds `endpoint`, trying again for up to a second while the listener just closed still
    /// holds a TCP port (libzmq closes it on its I/O thread, a moment after the unbind).
    private static func bind(_ socket: ZMQSocket, _ endpoint: String) throws {
        for attempt in 1...100 {
            do {
                try socket.bind(endpoint)
                return
            } catch let error as ZMQError where error.code == EADDRINUSE && attempt < 100 {
                usleep(10_000)
            }
        }
    }
}
