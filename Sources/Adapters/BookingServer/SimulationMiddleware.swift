import Foundation
import Hummingbird
import Logging

/// Latency and failures on purpose, for the deployment to feel like a remote service.
struct SimulationMiddleware<Context: RequestContext>: RouterMiddleware {
    let latency: Duration
    let failureRate: Double

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws
        -> Response
    {
        if failureRate > 0, Double.random(in: 0..<1) < failureRate, request.uri.path != "/health" {
            return BookingServer.problem(
                .serviceUnavailable, "the booking service is unavailable (simulated)", field: nil)
        }
        let response = try await next(request, context)
        // The work is done before the wait: a client that gives up or dies meanwhile has booked
        // without hearing so, the case idempotency keys exist for.
        if latency > .zero, request.method == .post { try await Task.sleep(for: latency) }
        return response
    }
}
