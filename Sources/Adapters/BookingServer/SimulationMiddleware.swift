import Foundation
import Hummingbird
import Logging
import NIOCore

/// Latency and failures on purpose, for the deployment to feel like a remote service, and the
/// faults that leave a client not knowing what its call did: stalls past its timeout, answers
/// over its size limit, connections cut after the request (see ``BookingServer/Configuration``).
struct SimulationMiddleware: RouterMiddleware {
    typealias Context = BookingRequestContext

    let faults: SimulatedFaults

    /// The body of an oversized answer: 2 MiB, twice the adapter's limit.
    static let oversizeBytes = 2 << 20

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws
        -> Response
    {
        guard request.uri.path != "/health" else { return try await next(request, context) }
        let configuration = faults.configuration
        let fault = faults.draw(key: BookingServer.idempotencyKey(of: request))
        switch fault {
        case .unavailable:
            return BookingServer.problem(
                .serviceUnavailable, "the booking service is unavailable (simulated)", field: nil)
        case .stall(beforeWork: true):
            try await Task.sleep(for: configuration.stall)
        case .cut(beforeWork: true):
            // The whole request is read first: the client has sent it, and hears nothing.
            _ = try await request.body.collect(upTo: 64 << 10)
            return await Self.cut(context)
        case .none, .stall(beforeWork: false), .oversize, .cut(beforeWork: false):
            break
        }
        var response = try await next(request, context)
        // The work is done before the wait: a client that gives up or dies meanwhile has booked
        // without hearing so, the case idempotency keys exist for.
        if configuration.latency > .zero, request.method == .post { try await Task.sleep(for: configuration.latency) }
        switch fault {
        case .stall(beforeWork: false):
            try await Task.sleep(for: configuration.stall)
        case .cut(beforeWork: false):
            return await Self.cut(context)
        case .oversize:
            // Leading whitespace keeps it valid JSON: an answer that is right but too large to read.
            let original = response.body
            response.headers[.contentLength] = nil
            response.body = ResponseBody { writer in
                try await writer.write(ByteBuffer(repeating: UInt8(ascii: " "), count: Self.oversizeBytes))
                try await original.write(writer)
            }
        case .none, .unavailable, .stall(beforeWork: true), .cut(beforeWork: true):
            break
        }
        return response
    }

    /// Closes the connection without an answer; what it returns is never written.
    private static func cut(_ context: Context) async -> Response {
        try? await context.channel.close()
        return Response(status: .internalServerError)
    }
}
