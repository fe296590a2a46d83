import CZeroMQ

/// A libzmq context: owns the I/O threads and creates sockets.
///
/// Contexts are thread-safe; sockets are not (see ``ZMQSocket``). The context is
/// terminated when the last reference goes away, which libzmq does only after every
/// socket is closed, so sockets keep their context alive.
public final class ZMQContext: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer

    /// Creates a context with `ioThreads` background I/O threads.
    public init(ioThreads: Int = 1) throws {
        guard let handle = zmq_ctx_new() else { throw ZMQError.last("zmq_ctx_new") }
        self.handle = handle
        if zmq_ctx_set(handle, ZMQ_IO_THREADS, Int32(ioThreads)) != 0 {
            let error = ZMQError.last("zmq_ctx_set(ZMQ_IO_THREADS, \(ioThreads))")
            zmq_ctx_term(handle)
            throw error
        }
    }

    /// Makes every blocking call on this context's sockets return `ETERM`.
    ///
    /// The sockets must still be closed by the threads that own them.
    public func shutdown() {
        zmq_ctx_shutdown(handle)
    }

    /// Creates a socket of the given kind. Use it from one thread only.
    public func socket(_ kind: ZMQSocketKind) throws -> ZMQSocket {
        try ZMQSocket(context: self, kind: kind)
    }

    deinit {
        while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
    }

    /// The libzmq version, e.g. "4.3.4".
    public static var libraryVersion: String {
        var major: Int32 = 0
        var minor: Int32 = 0
        var patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return "\(major).\(minor).\(patch)"
    }

    /// Whether libzmq was built with a capability, e.g. "curve" or "ipc".
    public static func has(_ capability: String) -> Bool {
        zmq_has(capability) != 0
    }
}
