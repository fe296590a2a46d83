import BusTesting
import EventLog
import Foundation
import PostgresStore
import Runtime
import TestServers
import TestSupport
import Testing

/// TLS to PostgreSQL: a server started with a certificate for `localhost` from a CA made in the
/// test (by `openssl`), and what each `sslmode` connects to and refuses, through the library and
/// through the commands that take `--store`. Skipped, saying why, where PostgreSQL cannot be
/// started or there is no `openssl`.
// Starts servers and runs openssl and psql, waiting for each: off the cooperative pool.
@Suite(
    .disabled(if: TestCertificates.unavailable != nil, Comment(rawValue: TestCertificates.unavailable ?? "")),
    .ownThreads, .timeLimit(.minutes(3)))
struct PostgresTLSTests {
    /// Whether the newest connection to `database` is encrypted; nil if there is none.
    static func newestConnectionUsesTLS(_ server: PostgresServer, database: String) throws -> Bool? {
        let answer = try server.sql(
            """
            SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
            WHERE a.datname = '\(database)' AND a.backend_type = 'client backend'
            ORDER BY a.backend_start DESC LIMIT 1
            """
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        return answer.isEmpty ? nil : answer == "t"
    }

    static func open(_ url: String) throws -> PostgresSnapshotStore {
        try PostgresSnapshotStore(
            url: PostgresStoreURL(parsing: url), wait: .zero, logger: TestLogging.logger("bureau.snapshots"))
    }

    /// The TLS error opening `url` gives; records an issue if it opens or fails otherwise.
    static func refusal(_ url: String) -> String? {
        do {
            _ = try open(url)
            Issue.record("\(url) connected; it should have been refused")
            return nil
        } catch let error as PostgresStoreError {
            guard case .tls = error else {
                Issue.record("\(url): not a TLS refusal: \(error)")
                return nil
            }
            return error.description
        } catch {
            Issue.record("\(url): \(error)")
            return nil
        }
    }

    @Test func eachModeConnectsWhereItShouldAndVerifyFullRefusesAnotherCAOrAnotherName() throws {
        let directory = try TemporaryDirectory("pgtls")
        let authority = try TestCertificates.makeAuthority("bureau-test-ca", in: directory)
        let stranger = try TestCertificates.makeAuthority("another-ca", in: directory)
        let server = try PostgresServer.start(
            certificate: TestCertificates.makeServerCertificate(for: "localhost", signedBy: authority, in: directory))
        defer { server.stop() }
        let database = try server.createDatabase(prefix: "tls")
        func url(_ host: String, _ options: String) -> String {
            "postgres://postgres:\(server.password)@\(host):\(server.port)/\(database)?connect_timeout=5&\(options)"
        }

        // Each store is kept open while the server is asked how its connection is made.
        func encrypted(_ url: String) throws -> Bool? {
            try withExtendedLifetime(try Self.open(url)) { _ in
                try Self.newestConnectionUsesTLS(server, database: database)
            }
        }
        // require: encrypted, whatever the certificate.
        #expect(try encrypted(url("127.0.0.1", "sslmode=require")) == true)
        // verify-full with the CA that signed it and the name it holds.
        let trusted = url("localhost", "sslmode=verify-full&sslrootcert=\(authority.certificate)")
        #expect(try encrypted(trusted) == true)
        let store = try Self.open(trusted)
        try store.save(Snapshot(module: "m", stateVersion: 1, position: 7, state: [1, 2] as [Int]))
        #expect(store.load([Int].self, module: "m", stateVersion: 1, rejected: { _ in })?.position == 7)
        // verify-ca checks the CA, not the name.
        #expect(try encrypted(url("127.0.0.1", "sslmode=verify-ca&sslrootcert=\(authority.certificate)")) == true)
        // The default is still plain TCP, which this server also takes.
        #expect(try encrypted(url("127.0.0.1", "connect_timeout=5")) == false)

        // Another CA: refused, naming the file it trusted.
        let otherCA = Self.refusal(url("localhost", "sslmode=verify-full&sslrootcert=\(stranger.certificate)"))
        #expect(otherCA?.contains("is not trusted") == true, "\(otherCA ?? "")")
        #expect(otherCA?.contains("sslrootcert=\(stranger.certificate)") == true, "\(otherCA ?? "")")
        // require with a CA file checks the CA, as libpq does.
        let requireOtherCA = Self.refusal(url("localhost", "sslmode=require&sslrootcert=\(stranger.certificate)"))
        #expect(requireOtherCA?.contains("is not trusted") == true, "\(requireOtherCA ?? "")")
        // The system's CAs do not include the test's.
        let systemCAs = Self.refusal(url("localhost", "sslmode=verify-full"))
        #expect(systemCAs?.contains("a CA this system trusts") == true, "\(systemCAs ?? "")")
        // The right CA, but the certificate names localhost, not 127.0.0.1.
        let otherName = Self.refusal(url("127.0.0.1", "sslmode=verify-full&sslrootcert=\(authority.certificate)"))
        #expect(otherName?.contains("does not name 127.0.0.1") == true, "\(otherName ?? "")")
        #expect(otherName?.contains(server.password) == false)
    }

    @Test func requireRefusesAServerWithoutTLS() throws {
        // The shared test server has no certificate.
        let plain = try TestPostgres.database(prefix: "notls")
        let refused = Self.refusal(plain + "?sslmode=require")
        #expect(refused?.contains("does not offer TLS") == true, "\(refused ?? "")")
    }

    @Test func everyCommandThatTakesAStoreGetsTLSFromTheSameURL() async throws {
        let directory = try TemporaryDirectory("pgtlscli")
        let authority = try TestCertificates.makeAuthority("bureau-test-ca", in: directory)
        let stranger = try TestCertificates.makeAuthority("another-ca", in: directory)
        let server = try PostgresServer.start(
            certificate: TestCertificates.makeServerCertificate(for: "localhost", signedBy: authority, in: directory))
        defer { server.stop() }
        let database = try server.createDatabase(prefix: "tlscli")
        let base = "postgres://postgres:\(server.password)@localhost:\(server.port)/\(database)?sslmode=verify-full"
        let data = directory.file("data")
        _ = try Self.open(base + "&sslrootcert=\(authority.certificate)")

        let trusted = try await ChildProcess.bureau(
            ["log", "stats", "--store", base + "&sslrootcert=\(authority.certificate)", "--data", data],
            in: directory.path, name: "stats-trusted", timeout: .seconds(60))
        #expect(trusted.code == 0, "\(trusted.err)")
        #expect(trusted.out.contains("events     0"), "\(trusted.out)")
        let untrusted = try await ChildProcess.bureau(
            ["log", "stats", "--store", base + "&sslrootcert=\(stranger.certificate)", "--data", data],
            in: directory.path, name: "stats-untrusted", timeout: .seconds(60))
        #expect(untrusted.code != 0)
        #expect(untrusted.err.contains("is not trusted"), "\(untrusted.err)")

        // The daemon holds its writer connection over TLS, verified: it starts, commits, and its
        // connection is encrypted; with another CA it does not start, and says why.
        let bus = try ChildProcess(
            BureauExecutable.path,
            ["bus", "--store", base + "&sslrootcert=\(authority.certificate)", "--data", data, "--no-metrics"],
            directory: directory.path, name: "bus-trusted", readiness: true)
        defer { bus.signal(SIGKILL) }
        _ = try await bus.waitUntilReady()
        #expect(try Self.newestConnectionUsesTLS(server, database: database) == true)
        let published = try await ChildProcess.bureau(
            [
                "publish", "--type", "bureau.watchlist.PairAddRequested", "--json", #"{"base":"EUR","quote":"USD"}"#,
                "--data", data,
            ],
            in: directory.path, name: "publish-tls", timeout: .seconds(60))
        #expect(published.code == 0, "\(published.err)")
        bus.signal(SIGTERM)
        #expect(await bus.exitCode(within: .seconds(30)) == 0, "\(bus.standardError)")
        let refusedBus = try await ChildProcess.bureau(
            ["bus", "--store", base + "&sslrootcert=\(stranger.certificate)", "--data", data, "--no-metrics"],
            in: directory.path, name: "bus-untrusted", timeout: .seconds(60))
        #expect(refusedBus.code != 0 && refusedBus.code != nil, "\(refusedBus.err)")
        #expect(refusedBus.err.contains("is not trusted"), "\(refusedBus.err)")
        // And what it committed is read back over TLS by the tools, trace among them.
        let shown = try await ChildProcess.bureau(
            ["log", "show", "--store", base + "&sslrootcert=\(authority.certificate)", "--data", data],
            in: directory.path, name: "show-tls", timeout: .seconds(60))
        #expect(shown.code == 0 && shown.out.contains("PairAddRequested"), "\(shown.out)\(shown.err)")

        // Every command parses the URL the same way: a CA file that cannot be read is said by each.
        let missing = base + "&sslrootcert=\(directory.file("missing.pem"))"
        let commands: [[String]] = [
            ["bus"], ["run", "watchlist"], ["show", "watchlist"], ["replay"], ["log", "show"], ["log", "stats"],
            ["log", "export"], ["log", "verify"], ["log", "import", directory.file("none.jsonl")],
            ["tui", "--replay"], ["trace", "00000000-0000-0000-0000-000000000001"],
        ]
        for command in commands {
            let result = try await ChildProcess.bureau(
                command + ["--store", missing, "--data", data], in: directory.path, name: "missing-ca",
                timeout: .seconds(60))
            #expect(result.code != 0 && result.code != nil, "\(command)")
            #expect(
                result.err.contains("sslrootcert: cannot read \(directory.file("missing.pem"))"),
                "\(command): \(result.err)")
        }
    }
}

/// A CA and server certificates made for a test by `openssl`, in the test's directory.
enum TestCertificates {
    static let openssl = "/usr/bin/openssl"

    static var unavailable: String? {
        if let reason = PostgresServer.unavailable { return reason }
        guard FileManager.default.isExecutableFile(atPath: openssl) else {
            return "no \(openssl) to make the test's CA and certificates (apt-get install openssl)"
        }
        return nil
    }

    /// A CA's certificate and key, made in `directory`.
    struct Authority {
        let certificate: String
        let key: String
    }

    static func makeAuthority(_ name: String, in directory: TemporaryDirectory) throws -> Authority {
        let authority = Authority(certificate: directory.file("\(name).crt"), key: directory.file("\(name).key"))
        try SystemCommand.run([
            openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", authority.key, "-out", authority.certificate, "-days", "2", "-subj", "/CN=\(name)",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
        return authority
    }

    /// A server certificate naming `dnsName` only (no IP address), signed by `authority`.
    static func makeServerCertificate(
        for dnsName: String, signedBy authority: Authority, in directory: TemporaryDirectory
    ) throws -> PostgresServer.Certificate {
        let certificate = PostgresServer.Certificate(
            certificateFile: directory.file("server.crt"), keyFile: directory.file("server.key"))
        try SystemCommand.run([
            openssl, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
            certificate.keyFile, "-out", directory.file("server.csr"), "-subj", "/CN=\(dnsName)",
        ])
        try Files.write(
            directory.file("server.ext"),
            "subjectAltName = DNS:\(dnsName)\nbasicConstraints = CA:FALSE\nextendedKeyUsage = serverAuth\n")
        try SystemCommand.run([
            openssl, "x509", "-req", "-in", directory.file("server.csr"), "-CA", authority.certificate, "-CAkey",
            authority.key, "-set_serial", "\(UInt32.random(in: 1...UInt32.max))", "-days", "2", "-out",
            certificate.certificateFile, "-extfile", directory.file("server.ext"),
        ])
        return certificate
    }
}
