import CZeroMQ

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A libzmq socket.
///
/// libzmq sockets are not thread-safe: create, use and close a socket on one thread.
/// The type is deliberately not `Sendable` so the compiler keeps it where it was made.
/// A socket closes itself when released, with the linger it was given.
public final class ZMQSocket {
    public let kind: ZMQSocketKind
    private let context: ZMQContext
    private var handle: UnsafeMutableRawPointer?
    /// One message buffer reused by every receive, so receiving allocates only the bytes.
    private let message: UnsafeMutablePointer<zmq_msg_t>

    init(context: ZMQContext, kind: ZMQSocketKind) throws {
        guard let handle = zmq_socket(context.handle, kind.rawValue) else {
            throw ZMQError.last("zmq_socket(\(kind))")
        }
        self.context = context
        self.kind = kind
        self.handle = handle
        message = .allocate(capacity: 1)
        zmq_msg_init(message)
    }

    deinit {
        close()
        zmq_msg_close(message)
        message.deallocate()
    }

    /// Closes the socket now. Later calls fail with `ENOTSOCK`.
    public func close() {
        if let handle {
            zmq_close(handle)
            self.handle = nil
        }
    }

    /// The raw socket, for ``ZMQPoller``.
    var rawHandle: UnsafeMutableRawPointer? { handle }

    func live(_ call: @autoclosure () -> String) throws -> UnsafeMutableRawPointer {
        guard let handle else { throw ZMQError(call: call(), code: ENOTSOCK) }
        return handle
    }

    // MARK: Endpoints

    public func bind(_ endpoint: String) throws {
        let socket = try live("zmq_bind(\(endpoint))")
        guard zmq_bind(socket, endpoint) == 0 else { throw ZMQError.last("zmq_bind(\(endpoint))") }
    }

    public func connect(_ endpoint: String) throws {
        let socket = try live("zmq_connect(\(endpoint))")
        guard zmq_connect(socket, endpoint) == 0 else { throw ZMQError.last("zmq_connect(\(endpoint))") }
    }

    public func unbind(_ endpoint: String) throws {
        let socket = try live("zmq_unbind(\(endpoint))")
        guard zmq_unbind(socket, endpoint) == 0 else { throw ZMQError.last("zmq_unbind(\(endpoint))") }
    }

    public func disconnect(_ endpoint: String) throws {
        let socket = try live("zmq_disconnect(\(endpoint))")
        guard zmq_disconnect(socket, endpoint) == 0 else { throw ZMQError.last("zmq_disconnect(\(endpoint))") }
    }

    // MARK: Sending

    /// Sends one frame. Returns `false` if `wait` is false and the frame could not be queued now.
    @discardableResult
    public func send(_ frame: some ContiguousBytes, more: Bool = false, wait: Bool = true) throws -> Bool {
        try frame.withUnsafeBytes { try send(bytes: $0, more: more, wait: wait) }
    }

    /// Sends one frame; the overload for `Data`, which the hot paths send, so that they do not
    /// go through the generic one unspecialised across the module boundary.
    @discardableResult
    public func send(_ frame: Data, more: Bool = false, wait: Bool = true) throws -> Bool {
        try frame.withUnsafeBytes { try send(bytes: $0, more: more, wait: wait) }
    }

    /// Sends one frame from raw bytes. Returns `false` if `wait` is false and it could not be queued now.
    @discardableResult
    public func send(bytes: UnsafeRawBufferPointer, more: Bool = false, wait: Bool = true) throws -> Bool {
        let socket = try live("zmq_send")
        let flags = (more ? ZMQ_SNDMORE : 0) | (wait ? 0 : ZMQ_DONTWAIT)
        while true {
            if zmq_send(socket, bytes.baseAddress, bytes.count, flags) >= 0 { return true }
            let error = ZMQError.last("zmq_send(\(kind))")
            if error.interrupted { continue }
            if error.wouldBlock && !wait { return false }
            throw error
        }
    }

    /// Sends the frames of one multipart message. Returns `false` if `wait` is false and the
    /// first frame could not be queued now (libzmq then queues all or none of the frames).
    /// An empty list sends nothing.
    @discardableResult
    public func send(multipart frames: [Data], wait: Bool = true) throws -> Bool {
        for index in frames.indices {
            let sent = try frames[index].withUnsafeBytes { bytes in
                try send(bytes: bytes, more: index != frames.count - 1, wait: index == 0 ? wait : true)
            }
            if !sent { return false }
        }
        return true
    }

    // MARK: Receiving

    /// Receives one frame and whether more frames of the same message follow.
    /// Returns nil if `wait` is false and nothing is waiting.
    public func receiveFrame(wait: Bool = true) throws -> (bytes: Data, more: Bool)? {
        guard let size = try receiveIntoMessage(wait: wait) else { return nil }
        return (Data(bytes: zmq_msg_data(message), count: size), zmq_msg_more(message) != 0)
    }

    /// Receives one frame into `buffer`, replacing what it held, and says whether more frames
    /// of the same message follow; nil if `wait` is false and nothing is waiting.
    ///
    /// For small frames received often: the buffer's storage is reused, so nothing is allocated.
    public func receiveFrame(into buffer: inout [UInt8], wait: Bool = true) throws -> Bool? {
        guard let size = try receiveIntoMessage(wait: wait) else { return nil }
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: UnsafeRawBufferPointer(start: zmq_msg_data(message), count: size))
        return zmq_msg_more(message) != 0
    }

    /// Receives one frame, copying its bytes out only if it is at most `limit` bytes; returns
    /// its size and whether more frames follow either way. Nil if `wait` is false and nothing
    /// is waiting. For reading a message whose frames may add up to more than a reader keeps.
    public func receiveFrame(limit: Int, wait: Bool = true) throws -> (bytes: Data?, size: Int, more: Bool)? {
        guard let size = try receiveIntoMessage(wait: wait) else { return nil }
        let bytes = size <= limit ? Data(bytes: zmq_msg_data(message), count: size) : nil
        return (bytes, size, zmq_msg_more(message) != 0)
    }

    /// Receives and drops the frames left of a message whose last frame has not been received.
    public func skipRestOfMessage() throws {
        while zmq_msg_more(message) != 0, try receiveIntoMessage(wait: true) != nil {}
    }

    /// Receives the next frame into the reused message; its size, or nil if `wait` is false and
    /// nothing is waiting.
    private func receiveIntoMessage(wait: Bool) throws -> Int? {
        let socket = try live("zmq_msg_recv")
        while true {
            let size = zmq_msg_recv(message, socket, wait ? 0 : ZMQ_DONTWAIT)
            if size >= 0 { return Int(size) }
            let error = ZMQError.last("zmq_msg_recv(\(kind))")
            if error.interrupted { continue }
            if error.wouldBlock && !wait { return nil }
            throw error
        }
    }

    /// Receives every frame of the next message. Returns nil if `wait` is false and nothing is waiting.
    ///
    /// libzmq delivers the frames of a message together, so once the first frame is here the
    /// rest are too.
    public func receiveMessage(wait: Bool = true) throws -> [Data]? {
        guard let first = try receiveFrame(wait: wait) else { return nil }
        var frames = [first.bytes]
        var more = first.more
        while more {
            guard let next = try receiveFrame(wait: true) else { break }
            frames.append(next.bytes)
            more = next.more
        }
        return frames
    }

    // MARK: State

    /// Whether a message can be received now without blocking.
    public var isReadable: Bool {
        get throws { try events() & Int32(ZMQ_POLLIN) != 0 }
    }

    /// Whether a message can be sent now without blocking.
    public var isWritable: Bool {
        get throws { try events() & Int32(ZMQ_POLLOUT) != 0 }
    }

    private func events() throws -> Int32 {
        try intOption(ZMQ_EVENTS, name: "ZMQ_EVENTS")
    }

    /// The endpoint the socket last bound, with a wildcard port resolved, e.g. `tcp://127.0.0.1:50412`.
    public var lastEndpoint: String {
        get throws {
            let socket = try live("zmq_getsockopt(ZMQ_LAST_ENDPOINT)")
            var buffer = [CChar](repeating: 0, count: 1024)
            var size = buffer.count
            guard zmq_getsockopt(socket, ZMQ_LAST_ENDPOINT, &buffer, &size) == 0 else {
                throw ZMQError.last("zmq_getsockopt(ZMQ_LAST_ENDPOINT)")
            }
            return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    // MARK: Raw options

    func setOption(_ option: Int32, int value: Int32, name: String) throws {
        let socket = try live("zmq_setsockopt(\(name))")
        var value = value
        guard zmq_setsockopt(socket, option, &value, MemoryLayout<Int32>.size) == 0 else {
            throw ZMQError.last("zmq_setsockopt(\(name), \(value))")
        }
    }

    func setOption(_ option: Int32, int64 value: Int64, name: String) throws {
        let socket = try live("zmq_setsockopt(\(name))")
        var value = value
        guard zmq_setsockopt(socket, option, &value, MemoryLayout<Int64>.size) == 0 else {
            throw ZMQError.last("zmq_setsockopt(\(name), \(value))")
        }
    }

    func setOption(_ option: Int32, bytes: some ContiguousBytes, name: String) throws {
        let socket = try live("zmq_setsockopt(\(name))")
        let result = bytes.withUnsafeBytes { buffer in
            zmq_setsockopt(socket, option, buffer.baseAddress, buffer.count)
        }
        guard result == 0 else { throw ZMQError.last("zmq_setsockopt(\(name))") }
    }

    func intOption(_ option: Int32, name: String) throws -> Int32 {
        let socket = try live("zmq_getsockopt(\(name))")
        var value: Int32 = 0
        var size = MemoryLayout<Int32>.size
        guard zmq_getsockopt(socket, option, &value, &size) == 0 else {
            throw ZMQError.last("zmq_getsockopt(\(name))")
        }
        return value
    }
}
