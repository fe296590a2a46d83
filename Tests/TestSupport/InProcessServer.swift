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

    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }

    deinit {
        task.cancel()
    }
}
