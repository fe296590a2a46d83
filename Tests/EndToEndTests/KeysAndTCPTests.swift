import Foundation
import TestServers
import TestSupport
import Testing

/// `bureau keygen` and `bureau bus --listen` through the real binary: owner-only secret keys
/// whatever the umask, a public key refused as the secret, `--insecure` warned about.
@Suite(.timeLimit(.minutes(2)))
struct KeysAndTCPTests {
    /// Runs `bureau ARGUMENTS` under umask 000 (through /bin/sh) and waits for it to end.
    static func runWithOpenUmask(_ arguments: [String], in directory: TemporaryDirectory) async throws -> Int32? {
        let child = try ChildProcess(
            "/bin/sh", ["-c", "umask 000; exec \"$0\" \"$@\"", BureauExecutable.path] + arguments,
            directory: directory.path, name: "umask")
        let code = await child.exitCode(within: .seconds(30))
        if code == nil { child.signal(SIGKILL) }
        return code
    }

    /// A TCP port free now on every address, with the next two (the bus takes all three).
    static func freePort() throws -> Int {
        try TCPPorts.freeTriple()
    }

    @Test func keygenWritesAnOwnerOnlySecretKeyWhateverTheUmask() async throws {
        let directory = try TemporaryDirectory("keygen")
        let code = try await Self.runWithOpenUmask(["keygen", directory.file("bus")], in: directory)
        #expect(code == 0)
        var info = stat()
        #expect(stat(directory.file("bus.key"), &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600, "mode \(String(info.st_mode & 0o777, radix: 8))")
        let secret = try String(contentsOfFile: directory.file("bus.key"), encoding: .utf8)
        let `public` = try String(contentsOfFile: directory.file("bus.pub"), encoding: .utf8)
        #expect(secret.hasPrefix("# bureau CURVE secret key\n") && secret.utf8.count == 26 + 41)
        #expect(`public`.hasPrefix("# bureau CURVE public key\n") && `public`.utf8.count == 26 + 41)
    }

    @Test func aPublicKeyGivenAsTheSecretKeyStopsTheBusNamingTheFile() async throws {
        let directory = try TemporaryDirectory("curve")
        for stem in ["bus", "client"] {
            #expect(try await Self.runWithOpenUmask(["keygen", directory.file(stem)], in: directory) == 0)
        }
        let bus = BusProcess(directory: directory.path)
        let child = try await bus.start(
            [
                "--listen", "127.0.0.1:\(try Self.freePort())", "--curve-secret-file", directory.file("bus.pub"),
                "--allow-keys", directory.file("client.pub"),
            ], waitUntilReady: false)
        let code = await child.exitCode(within: .seconds(30))
        if code == nil { child.signal(SIGKILL) }
        #expect(code == 1)
        #expect(
            child.standardError.contains("\(directory.file("bus.pub")) holds a public key"), "\(child.standardError)")
    }

    @Test(arguments: [("0.0.0.0", true), ("127.0.0.1", false)])
    func insecureIsWarnedAboutAtStartLoudlyOffLoopback(host: String, loud: Bool) async throws {
        let directory = try TemporaryDirectory("insecure")
        let bus = BusProcess(directory: directory.path)
        let port = try Self.freePort()
        let child = try await bus.start(["--listen", "\(host):\(port)", "--insecure"])
        #expect(await bus.stop() == 0)
        let err = child.standardError
        #expect(err.contains("!!! INSECURE: the bus listens on \(host):\(port)-\(port + 2)") == loud, "\(err)")
        #expect(
            err.contains("--insecure: the bus listens on \(host):\(port)-\(port + 2) over plain TCP") == !loud, "\(err)"
        )
    }
}
