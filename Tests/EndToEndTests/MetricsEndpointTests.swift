import Bus
import Foundation
import TestSupport
import Testing
import ZeroMQBus

#if canImport(Glibc)
    import Glibc
#endif

/// What a process does when it cannot serve /metrics, and what it never puts in one.
@Suite(.timeLimit(.minutes(2)))
struct MetricsEndpointTests {
    @Test func aMetricsPortInUseIsSaidOnceCountedAndTriedAgainWhileTheBusGoesOn() async throws {
        let directory = try TemporaryDirectory("metrics-port")
        let port = try TCPPorts.free()
        let holder = try Self.listen(on: port)
        let bus = BusProcess(directory: directory.path)
        // The bus is up and answers although its /metrics cannot be served.
        let daemon = try await bus.start(["--metrics-address", "127.0.0.1:\(port)"])
        let client = try ZeroMQBusClient(location: bus.location, options: .init(process: "test"))
        defer { client.close() }
        #expect(try await client.publish(OutgoingEvent(type: "bureau.test.Happened", payload: Data())) == .committed(1))
        try await PrometheusServer.until(timeout: .seconds(10), what: "the bus to say it cannot serve /metrics") {
            daemon.standardError.contains("cannot serve /metrics")
        }
        // Freed, the port is taken at a later try; what failed before is counted there.
        close(holder)
        let record = bus.location.runDirectory + "/metrics/bus.json"
        try await PrometheusServer.until(timeout: .seconds(45), what: "\(record)") {
            FileManager.default.fileExists(atPath: record)
        }
        let (status, body) = try await PrometheusServer.get("http://127.0.0.1:\(port)/metrics")
        #expect(status == 200)
        let text = String(decoding: body, as: UTF8.self)
        let failures = text.split(separator: "\n").first { $0.hasPrefix("bureau_metrics_endpoint_failures_total ") }
        let counted: Double? = failures.flatMap { line in line.split(separator: " ").last.flatMap { Double($0) } }
        #expect((counted ?? 0) >= 1, "\(text)")
        #expect(daemon.standardError.components(separatedBy: "cannot serve /metrics").count == 2, "said once")
        #expect(await bus.stop() == 0)
    }

    /// A TCP socket listening on 127.0.0.1:`port`: a port in use.
    static func listen(on port: Int) throws -> Int32 {
        // Close-on-exec: a child would otherwise inherit it and hold the port after the test closes it.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard fd >= 0, bound == 0, Glibc.listen(fd, 1) == 0 else {
            throw TestSupportError("cannot listen on 127.0.0.1:\(port): errno \(errno)")
        }
        return fd
    }
}
