import CZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// A dedicated OS thread for a loop that owns libzmq sockets.
///
/// libzmq sockets must stay on one thread, and a blocking poll must not hold a Swift
/// concurrency thread, so each socket loop gets a thread of its own that can be joined.
public final class SocketThread: @unchecked Sendable {
    private var thread: pthread_t?
    private let body: @Sendable () -> Void
    private let name: String

    /// Starts a thread named `name` (shown by `top -H`, at most 15 characters) running `body`.
    public init(name: String, _ body: @escaping @Sendable () -> Void) throws {
        self.body = body
        self.name = String(name.prefix(15))
        let unmanaged = Unmanaged.passRetained(self)
        var handle = pthread_t()
        let result = pthread_create(
            &handle, nil,
            { context in
                guard let context else { return nil }
                let thread = Unmanaged<SocketThread>.fromOpaque(context).takeRetainedValue()
                pthread_setname_np(pthread_self(), thread.name)
                thread.body()
                return nil
            }, unmanaged.toOpaque())
        guard result == 0 else {
            unmanaged.release()
            throw ZMQError(call: "pthread_create(\(name))", code: result)
        }
        thread = handle
    }

    /// Waits for the thread's body to return. Call it once.
    public func join() {
        if let thread {
            pthread_join(thread, nil)
            self.thread = nil
        }
    }
}
