import Foundation
import Guards
import Hummingbird
import Logging
import RatesAdapter
import ServiceLifecycle
import TestServers
import TestSupport
import Testing

/// What every ``RatesSource`` must do, against the HTTP source and a real server, and the scripted twin.
struct RatesSourceContractTests {
    static let daily = Data(
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01"><Cube><Cube time='2026-10-30'><Cube currency='USD' rate='1.1172'/></Cube></Cube></gesmes:Envelope>
        """.utf8)

    /// A server answering the daily document at /ok, 500 at /fail, and nothing for a while at /slow.
    static func server() async throws -> InProcessServer {
        try await InProcessServer { onListening in
            let router = Router()
            router.get("/ok") { _, _ in Response(status: .ok, body: .init(byteBuffer: ByteBuffer(bytes: Array(daily))))
            }
            router.get("/fail") { _, _ in Response(status: .internalServerError) }
            router.get("/slow") { _, _ -> Response in
                try await Task.sleep(for: .seconds(5))
                return Response(status: .ok)
            }
            router.get("/big") { _, _ in
                Response(status: .ok, body: .init(byteBuffer: ByteBuffer(repeating: 0x20, count: 3 << 20)))
            }
            return Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { await onListening($0.localAddress?.port ?? 0) }, logger: TestLogging.logger("server")
            )
        }
    }

    enum Case: String, CaseIterable, CustomTestStringConvertible {
        case http, scripted
        var testDescription: String { rawValue }
    }

    /// A source of each kind behaving as `behaviour` says.
    static func source(_ kind: Case, _ behaviour: String, server: InProcessServer) -> any RatesSource {
        switch kind {
        case .http:
            return HTTPRatesSource(
                url: "http://127.0.0.1:\(server.port)/\(behaviour)",
                // Long enough for a loaded machine, except where the timeout is what is tested.
                timeout: behaviour == "slow" ? .milliseconds(300) : .seconds(10), bodyLimit: 1 << 20)
        case .scripted:
            let step: ScriptedRatesSource.Step =
                switch behaviour {
                case "ok": .document(daily)
                case "fail": .failure(.status(500))
                case "slow": .failure(.timedOut(milliseconds: 300))
                default: .failure(.tooLarge(limit: 1 << 20))
                }
            return ScriptedRatesSource(steps: [step])
        }
    }

    @Test(arguments: Case.allCases)
    func aDocumentComesBackWhole(kind: Case) async throws {
        let server = try await Self.server()
        #expect(try await Self.source(kind, "ok", server: server).fetch() == Self.daily)
        await server.stop()
    }

    @Test(arguments: Case.allCases)
    func aServerErrorIsItsStatus(kind: Case) async throws {
        let server = try await Self.server()
        await #expect(throws: FetchError.status(500)) { try await Self.source(kind, "fail", server: server).fetch() }
        await server.stop()
    }

    @Test(arguments: Case.allCases)
    func aSlowServerTimesOut(kind: Case) async throws {
        let server = try await Self.server()
        await #expect(throws: FetchError.timedOut(milliseconds: 300)) {
            try await Self.source(kind, "slow", server: server).fetch()
        }
        await server.stop()
    }

    @Test(arguments: Case.allCases)
    func aBodyOverTheLimitIsRefused(kind: Case) async throws {
        let server = try await Self.server()
        await #expect(throws: FetchError.tooLarge(limit: 1 << 20)) {
            try await Self.source(kind, "big", server: server).fetch()
        }
        await server.stop()
    }

    /// A port nothing listens on refuses the connection: that is the answer, told at once.
    /// The source's timeout is a minute and the test waits 20 s: a refusal reported as a
    /// timeout, or only at the timeout, cannot pass.
    @Test func aRefusedConnectionIsReportedAsRefusedAtOnce() async throws {
        let port = try TCPPorts.free()
        let source = HTTPRatesSource(url: "http://127.0.0.1:\(port)/daily.xml", timeout: .seconds(60))
        let outcome = await Timeout.result(within: .seconds(20)) { () async -> Result<Data, FetchError> in
            do throws(FetchError) { return .success(try await source.fetch()) } catch { return .failure(error) }
        }
        #expect(outcome == .failure(.refused("127.0.0.1:\(port)")), "\(String(describing: outcome))")
        #expect(
            FetchError.refused("127.0.0.1:\(port)").description
                == "connection refused: nothing listens at 127.0.0.1:\(port)")
    }
}
