import Hummingbird
import ServiceLifecycle

/// A Hummingbird application run in the test process on a port it picked; ``stop()`` ends it
/// gracefully, and releasing it cancels it.
public final class InProcessServer: @unchecked Sendable {
    public let port: Int
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    public init(_ make: (@escaping @Sendable (Int) async -> Void) throws -> some ApplicationProtocol) async throws {
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let application = try make { port in listening.yield(port) }
        group = ServiceGroup(services: [application], logger: TestLogging.logger("server"))
        let group = self.group
        task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        port = await iterator.next() ?? 0
    }

    /// Stops gracefully, waiting for the requests in flight; past `grace`, cancels the server,
    /// which closes every connection. A response the client stopped reading without closing
    /// its connection (a body over its limit) would otherwise hold a graceful stop for ever:
    /// once, a test waited on it until it was killed.
    public func stop(grace: Duration = .seconds(10)) async {
        await group.triggerGracefulShutdown()
        let task = self.task
        await withTaskGroup(of: Void.self) { waits in
            waits.addTask { _ = try? await task.value }
            waits.addTask {
                // Ends early, cancelled, when the server stopped within the grace.
                guard (try? await Task.sleep(for: grace)) != nil else { return }
                task.cancel()
            }
            await waits.next()
            waits.cancelAll()
        }
    }

    deinit {
        task.cancel()
    }
}
