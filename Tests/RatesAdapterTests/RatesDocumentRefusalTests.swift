import BureauSchemas
import Bus
import BusTesting
import Foundation
import Guards
import Hummingbird
import RatesAdapter
import Runtime
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Bad rates documents served by a real HTTP server on loopback: each is reported
/// (`RatesFetchFailed` and `ErrorRaised`, with a reason naming what was wrong) and nothing is published.
@Suite(.timeLimit(.minutes(2)))
struct RatesDocumentRefusalTests {
    static func document(_ cubes: String) -> String {
        "<gesmes:Envelope xmlns:gesmes=\"g\"><Cube>\(cubes)</Cube></gesmes:Envelope>"
    }

    static let documents: [String: String] = [
        "bad-date": document("<Cube time='2024-02-30'><Cube currency='USD' rate='1.1'/></Cube>"),
        "base": document(
            "<Cube time='2024-02-28'><Cube currency='EUR' rate='1'/><Cube currency='USD' rate='1.1'/></Cube>"),
        "negative": document("<Cube time='2024-02-28'><Cube currency='USD' rate='-1.1'/></Cube>"),
        "nan": document("<Cube time='2024-02-28'><Cube currency='USD' rate='NaN'/></Cube>"),
        "long": document(
            "<Cube time='2024-02-28'><Cube currency='USD' rate='1.1' x='\(String(repeating: "y", count: 1000))'/></Cube>"
        ),
    ]

    /// Serves each document at /NAME, and at /endless a body with no length that never ends.
    static func server() async throws -> InProcessServer {
        try await InProcessServer { onListening in
            let router = Router()
            for (name, text) in documents {
                router.get("/\(name)") { _, _ in
                    Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: text)))
                }
            }
            router.get("/endless") { _, _ in
                Response(
                    status: .ok,
                    body: ResponseBody { writer in
                        let chunk = ByteBuffer(repeating: 0x20, count: 64 << 10)
                        // Bounded, in case the client never hangs up: 64 MiB, far over the limit.
                        for _ in 0..<1024 { try await writer.write(chunk) }
                        try await writer.finish(nil)
                    })
            }
            return Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { await onListening($0.localAddress?.port ?? 0) }, logger: TestLogging.logger("server")
            )
        }
    }

    @Test(arguments: [
        (
            "bad-date", "malformed-document",
            "malformed document: time='2024-02-30' at line 1 is not a calendar date (YYYY-MM-DD)"
        ),
        (
            "base", "malformed-document",
            "malformed document: EUR at line 1 is the base currency; it cannot be quoted against itself"
        ),
        (
            "negative", "malformed-document",
            "malformed document: rate='-1.1' for USD at line 1 is not a positive decimal"
        ),
        ("nan", "malformed-document", "malformed document: rate='NaN' for USD at line 1 is not a positive decimal"),
        (
            "long", "malformed-document",
            "malformed document: x= of <Cube> at line 1 is 1000 bytes long; the limit is 256"
        ),
        ("endless", "fetch-failed", "the body is over the limit of 1048576 bytes"),
    ])
    func aBadDocumentIsReportedAndNothingIsPublished(path: String, code: String, reason: String) async throws {
        let server = try await Self.server()
        try await RatesAdapterServiceTests.onBus { deployment in
            // Long timeouts: a loaded machine must not turn a refusal into a timeout.
            let source = HTTPRatesSource(url: "http://127.0.0.1:\(server.port)/\(path)", timeout: .seconds(30))
            let events = try await RatesAdapterServiceTests.withAdapter(
                source: source, on: deployment, configure: { $0.timeout = .seconds(30) }
            ) { observer in
                try await observer.collect(RatesAdapterServiceTests.failures, count: 2)
            }
            await server.stop()
            let failed = try #require(try events.first?.payload(as: Bureau_Rates_RatesFetchFailed.self))
            #expect(failed.reason == reason)
            let raised = try #require(try events.last?.payload(as: Bureau_System_ErrorRaised.self))
            #expect(raised.code == code && raised.message.hasSuffix(reason))
            // The adapter has stopped (withAdapter waits for it): what it published is in the log.
            let observer = try deployment.connect("observer")
            let published = try await observer.eventsUpToHead(.types([Bureau_Rates_RatesPublished.protoMessageName]))
            #expect(published.isEmpty, "nothing from a bad document is published")
            observer.close()
        }
    }

    /// The test server's own guard: a client that asks for the endless body, then neither reads
    /// nor hangs up, holds a graceful stop only until its grace has passed.
    @Test func aClientThatStopsReadingHoldsTheServersStopOnlyForItsGrace() async throws {
        let server = try await Self.server()
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(socket >= 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(server.port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(connected == 0)
        let request = "GET /endless HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        #expect(request.withCString { send(socket, $0, strlen($0), 0) } == request.utf8.count)
        // The first bytes of the answer: the server is writing, and will soon wait for room.
        // Received on a thread of its own (a blocking recv on the pool holds one of its two
        // threads), for 30 seconds at most.
        var limit = timeval(tv_sec: 30, tv_usec: 0)
        #expect(setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size)) == 0)
        let received = try await OwnThread.run(name: "test-recv") {
            var first = [UInt8](repeating: 0, count: 16)
            return recv(socket, &first, first.count, 0)
        }
        #expect(received > 0)
        let started = ContinuousClock.now
        await server.stop(grace: .seconds(2))
        #expect(ContinuousClock.now - started < .seconds(60), "stopped once the grace had passed")
    }
}
