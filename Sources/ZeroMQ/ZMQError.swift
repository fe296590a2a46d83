import CZeroMQ

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A libzmq call that failed: which call, on what, and libzmq's text for the errno.
public struct ZMQError: Error, CustomStringConvertible, Sendable {
    /// The libzmq function and its main argument, e.g. `zmq_bind(ipc:///tmp/x/bus.sock)`.
    public let call: String
    /// The errno libzmq reported.
    public let code: Int32

    public init(call: String, code: Int32) {
        self.call = call
        self.code = code
    }

    /// Captures `zmq_errno()` for a call that just failed.
    static func last(_ call: @autoclosure () -> String) -> ZMQError {
        ZMQError(call: call(), code: zmq_errno())
    }

    /// libzmq's description of the errno, e.g. "Address already in use".
    public var text: String { String(cString: zmq_strerror(code)) }

    /// The call would have blocked (`EAGAIN`).
    public var wouldBlock: Bool { code == EAGAIN }
    /// The context was terminated (`ETERM`): the owner is shutting down.
    public var contextTerminated: Bool { code == ETERM }
    /// A signal interrupted the call (`EINTR`); retrying is safe.
    public var interrupted: Bool { code == EINTR }

    public var description: String { "\(call) failed: \(text) (errno \(code))" }
}
