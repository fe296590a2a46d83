import CZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// A thread-safe doorbell: any thread rings it, the thread that owns a poll loop hears it.
///
/// Backed by a Linux eventfd, which ``ZMQPoller`` can watch beside sockets. An eventfd
/// instead of an `inproc://` socket, because a socket would need one per ringing thread;
/// the eventfd is safe to ring from any thread or task.
public final class WakeSignal: @unchecked Sendable {
    /// The descriptor to add to a ``ZMQPoller``.
    public let fileDescriptor: Int32

    public init() throws {
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard fd >= 0 else { throw ZMQError(call: "eventfd", code: errno) }
        fileDescriptor = fd
    }

    /// Wakes the poll loop. Rings coalesce: many rings before a ``drain()`` wake it once.
    public func ring() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(fileDescriptor, $0.baseAddress, 8) }
    }

    /// Clears the rings heard so far; call it after the poller says the signal is readable.
    public func drain() {
        var count: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &count) { read(fileDescriptor, $0.baseAddress, 8) }
    }

    deinit {
        Glibc.close(fileDescriptor)
    }
}
