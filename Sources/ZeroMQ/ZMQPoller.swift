import CZeroMQ

/// Waits on several sockets and plain file descriptors at once (`zmq_poll`).
///
/// Build it once on the thread that owns the sockets, then call ``poll(timeout:)`` in the loop.
public struct ZMQPoller {
    private var items: [zmq_pollitem_t] = []

    public init() {}

    /// Watches a socket for incoming messages; returns the index to ask ``isReadable(_:)`` about.
    @discardableResult
    public mutating func add(_ socket: ZMQSocket, readable: Bool = true, writable: Bool = false) -> Int {
        var events: Int16 = 0
        if readable { events |= Int16(ZMQ_POLLIN) }
        if writable { events |= Int16(ZMQ_POLLOUT) }
        items.append(zmq_pollitem_t(socket: socket.rawHandle, fd: -1, events: events, revents: 0))
        return items.count - 1
    }

    /// Watches a file descriptor (an eventfd, a pipe) for readability.
    @discardableResult
    public mutating func add(fileDescriptor: Int32) -> Int {
        items.append(zmq_pollitem_t(socket: nil, fd: fileDescriptor, events: Int16(ZMQ_POLLIN), revents: 0))
        return items.count - 1
    }

    /// Turns watching an item for readability on or off (to stop reading a peer that has no room).
    public mutating func setReadable(_ index: Int, _ on: Bool) {
        if on {
            items[index].events |= Int16(ZMQ_POLLIN)
        } else {
            items[index].events &= ~Int16(ZMQ_POLLIN)
        }
    }

    /// Waits until an item is ready or `timeout` milliseconds pass (-1: forever). Returns how many are ready.
    ///
    /// An interrupting signal returns 0, as a timeout does.
    @discardableResult
    public mutating func poll(timeout milliseconds: Int) throws -> Int {
        let count = items.withUnsafeMutableBufferPointer { buffer in
            zmq_poll(buffer.baseAddress, Int32(buffer.count), milliseconds)
        }
        if count < 0 {
            let error = ZMQError.last("zmq_poll")
            if error.interrupted { return 0 }
            throw error
        }
        return Int(count)
    }

    public func isReadable(_ index: Int) -> Bool {
        items[index].revents & Int16(ZMQ_POLLIN) != 0
    }

    public func isWritable(_ index: Int) -> Bool {
        items[index].revents & Int16(ZMQ_POLLOUT) != 0
    }
}
