#if canImport(Glibc)
    import Glibc
#endif

/// A dedicated OS thread, for work that blocks: a loop that owns libzmq sockets (they must stay
/// on one thread), a blocking poll, a wait on a lock or a semaphore. None of it may hold a thread
/// of Swift's cooperative pool (two on two cores), or every other task waits behind it.
public final class OwnThread: @unchecked Sendable {
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
                let thread = Unmanaged<OwnThread>.fromOpaque(context).takeRetainedValue()
                _ = nameThread(pthread_self(), thread.name)
                thread.body()
                return nil
            }, unmanaged.toOpaque())
        guard result == 0 else {
            unmanaged.release()
            throw OwnThreadError(name: name, code: result)
        }
        thread = handle
    }

    /// Starts a thread named `name` running `body` and lets it end by itself, never joined: for a
    /// thread whose end the caller learns of otherwise (a condition it signals as it returns).
    public static func detached(name: String, _ body: @escaping @Sendable () -> Void) throws {
        try OwnThread(name: name, body).detach()
    }

    /// Runs `body` on a thread of its own and returns what it returns: for blocking work (a
    /// standby waiting for a lock, a test waiting on a semaphore) or a long computation that an
    /// async caller must not do on the cooperative pool.
    public static func run<Value: Sendable>(
        name: String, _ body: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            do {
                try detached(name: name) { continuation.resume(with: Result { try body() }) }
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

/// A thread the system would not start (`pthread_create` failed).
public struct OwnThreadError: Error, CustomStringConvertible {
    public let name: String
    public let code: Int32

    public var description: String { "cannot start the thread \(name): pthread_create failed (\(code))" }
}

/// glibc's `pthread_setname_np(3)`, which the Glibc module does not export without `_GNU_SOURCE`.
@_silgen_name("pthread_setname_np")
private func nameThread(_ thread: pthread_t, _ name: UnsafePointer<CChar>) -> Int32
