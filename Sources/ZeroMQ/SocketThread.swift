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

    /// Runs `body` on a thread of its own and returns what it returns: for blocking work (a
    /// standby waiting for a lock) that an async caller must not do on the cooperative pool.
    public static func run<Value: Sendable>(
        name: String, _ body: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            do {
                let thread = try SocketThread(name: name) { continuation.resume(with: Result { try body() }) }
                thread.detach()
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    /// Lets the thread end by itself, never joined.
    private func detach() {
        if let thread {
            pthread_detach(thread)
            self.thread = nil
        }
    }

    /// Waits for the thread's body to return. Call it once.
    public func join() {
        if let thread {
            pthread_join(thread, nil)
            self.thread = nil
        }
    }
}
