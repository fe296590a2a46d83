import Foundation
import Guards
import HTTPCalls
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The client's own promises, beyond what the adapters' contract suites show through it.
@Suite(.timeLimit(.minutes(1)))
struct HTTPCallsTests {
    @Test(arguments: ["ftp://127.0.0.1/rates.xml", "file:///etc/passwd", "127.0.0.1:80/x", ""])
    func aURLThatIsNotHTTPIsRefusedBeforeAnythingIsSent(url: String) async {
        await #expect(throws: HTTPCallError.invalidURL("'\(url)' is not an http or https URL")) {
            try await HTTPCalls.perform(HTTPRequest(url: url), timeout: .seconds(5), bodyLimit: 1024)
        }
        #expect(!HTTPCallError.invalidURL("").requestWasSent)
    }

    /// A server that takes connections (the kernel's backlog) and never answers.
    static func silentServer() throws -> (socket: Int32, port: Int) {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(socket >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        #expect(bound == 0 && listen(socket, 8) == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        return (socket, Int(UInt16(bigEndian: address.sin_port)))
    }

    @Test func cancellingTheCallingTaskStopsACallThatWaitsForAnAnswerAtOnce() async throws {
        let server = try Self.silentServer()
        defer { close(server.socket) }
        let call = Task { () -> HTTPCallError? in
            do throws(HTTPCallError) {
                _ = try await HTTPCalls.perform(
                    HTTPRequest(url: "http://127.0.0.1:\(server.port)/"), timeout: .seconds(60), bodyLimit: 1024)
                return nil
            } catch {
                return error
            }
        }
        call.cancel()
        // The call's own timeout is a minute: an end within 20 s is the cancellation's.
        let outcome: HTTPCallError?? = await Timeout.result(within: .seconds(20)) { await call.value }
        #expect(outcome == .some(.some(.cancelled)))
    }

    @Test func noAnswerWithinTheTimeoutOnceConnectedIsATimeoutAfterTheRequestMayHaveBeenSent() async throws {
        let server = try Self.silentServer()
        defer { close(server.socket) }
        await #expect(throws: HTTPCallError.timedOut(milliseconds: 300)) {
            try await HTTPCalls.perform(
                HTTPRequest(method: "POST", url: "http://127.0.0.1:\(server.port)/", body: Data("{}".utf8)),
                timeout: .milliseconds(300), bodyLimit: 1024)
        }
        #expect(HTTPCallError.timedOut(milliseconds: 300).requestWasSent)
    }
}
