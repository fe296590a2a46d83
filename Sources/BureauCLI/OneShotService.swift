import ServiceLifecycle

/// A service that runs a piece of work once, then waits for the group to shut down.
///
/// A graceful shutdown also ends work still waiting (e.g. for readiness that never comes
/// because the bus is down): the work is cancelled, and must not outlive the process.
struct OneShotService: Service {
    let work: @Sendable () async -> Void

    init(_ work: @escaping @Sendable () async -> Void) {
        self.work = work
    }

    func run() async throws {
        // Iterating a stream ends on cancellation too, which awaiting the task would not.
        let (done, finished) = AsyncStream.makeStream(of: Void.self)
        let task = Task {
            await work()
            finished.finish()
        }
        await withGracefulShutdownHandler {
            for await _ in done {}
        } onGracefulShutdown: {
            finished.finish()
            task.cancel()
        }
        try? await gracefulShutdown()
    }
}
