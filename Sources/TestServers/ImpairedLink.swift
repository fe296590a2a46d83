import Foundation
import Guards
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A link that loses and delays Ethernet frames in user space: two TAP devices this process
/// copies frames between, in both directions, dropping a share of them at random and holding
/// each for a delay. What `tc netem` does, for kernels built without it.
///
/// ``stop()`` (or releasing it) ends the copying and removes the devices.
final class ImpairedLink: @unchecked Sendable {
    /// The TAP devices' names: frames written to one come out of the other.
    let names: (String, String)
    private let descriptors: (Int32, Int32)
    private let stopped = Atomic<Bool>(false)
    /// Frames passed on and frames lost, both directions together.
    let forwarded = Atomic<Int>(0)
    let dropped = Atomic<Int>(0)
    private var threads: [Thread] = []
    private let finished = DispatchGroup()

    /// `TUNSETIFF`, `IFF_TAP` and `IFF_NO_PI` from linux/if_tun.h.
    private static let setInterface: UInt = 0x4004_54CA
    private static let tapFlags: Int16 = 0x0002 | 0x1000

    /// `seed` chooses which frames are lost (each direction draws from its own generator).
    init(names: (String, String), lossPercent: Int, delay: Duration, seed: UInt64) throws {
        self.names = names
        let first = try Self.openTAP(names.0)
        let second: Int32
        do {
            second = try Self.openTAP(names.1)
        } catch {
            close(first)
            throw error
        }
        descriptors = (first, second)
        for (direction, (from, to)) in [(first, second), (second, first)].enumerated() {
            let queue = DelayQueue()
            let generator = Xoshiro256(seed: seed &+ UInt64(direction))
            spawn { [self] in
                copy(from: from, into: queue, lossPercent: lossPercent, delay: delay, generator: generator)
            }
            spawn { [self] in deliver(queue, to: to) }
        }
    }

    deinit { stop() }

    /// Stops copying and closes the devices (which removes them).
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        finished.wait()
        close(descriptors.0)
        close(descriptors.1)
    }

    private func spawn(_ body: @escaping @Sendable () -> Void) {
        finished.enter()
        let thread = Thread { [finished] in
            body()
            finished.leave()
        }
        threads.append(thread)
        thread.start()
    }

    private static func openTAP(_ name: String) throws -> Int32 {
        let fd = open("/dev/net/tun", O_RDWR)
        guard fd >= 0 else { throw TestServerError("cannot open /dev/net/tun: errno \(errno)") }
        var request = ifreq()
        withUnsafeMutableBytes(of: &request.ifr_ifrn.ifrn_name) { buffer in
            for (index, byte) in name.utf8.prefix(buffer.count - 1).enumerated() { buffer[index] = byte }
        }
        request.ifr_ifru.ifru_flags = tapFlags
        let result = withUnsafeMutablePointer(to: &request) { ioctl(fd, setInterface, $0) }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw TestServerError("cannot make the TAP device \(name): errno \(code)")
        }
        return fd
    }

    /// Reads frames as they come (polling, so that it notices ``stop()``), drops a share,
    /// and queues the rest to be written when their delay has passed.
    private func copy(
        from fd: Int32, into queue: DelayQueue, lossPercent: Int, delay: Duration, generator: Xoshiro256
    ) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var generator = generator
        while !stopped.load(ordering: .acquiring) {
            var item = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&item, 1, 100) > 0 else { continue }
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { continue }
            if Int.random(in: 0..<100, using: &generator) < lossPercent {
                dropped.add(1, ordering: .relaxed)
                continue
            }
            forwarded.add(1, ordering: .relaxed)
            queue.put(Array(buffer[0..<count]), due: .now + delay)
        }
        queue.close()
    }

    /// Writes each queued frame once its time has come.
    private func deliver(_ queue: DelayQueue, to fd: Int32) {
        while let frame = queue.take() {
            _ = frame.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        }
    }
}

/// Frames in the order they came, each with the instant it may leave.
private final class DelayQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var frames: [(frame: [UInt8], due: ContinuousClock.Instant)] = []
    private var head = 0
    private var closed = false

    func put(_ frame: [UInt8], due: ContinuousClock.Instant) {
        condition.lock()
        frames.append((frame, due))
        condition.signal()
        condition.unlock()
    }

    func close() {
        condition.lock()
        closed = true
        condition.signal()
        condition.unlock()
    }

    /// The next frame once it is due; nil once closed.
    func take() -> [UInt8]? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if closed { return nil }
            if head < frames.count {
                let (frame, due) = frames[head]
                let wait = due - .now
                if wait <= .zero {
                    head += 1
                    if head > 4096 {
                        frames.removeFirst(head)
                        head = 0
                    }
                    return frame
                }
                // Holding the frame for its delay is the point of this queue.
                _ = condition.wait(until: Date(timeIntervalSinceNow: wait.inSeconds))
            } else {
                condition.wait()
            }
        }
    }
}
