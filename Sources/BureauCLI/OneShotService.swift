import ServiceLifecycle

/// A service that runs a piece of work once, then waits for the group to shut down.
struct OneShotService: Service {
    let work: @Sendable () async -> Void

    init(_ work: @escaping @Sendable () async -> Void) {
        self.work = work
    }

    func run() async throws {
        await work()
        try? await gracefulShutdown()
    }
}
