import PostgresStore
import TestSupport
import Testing

/// Store URLs as people type them, and the message each mistake gets; a password is never shown.
struct PostgresStoreURLTests {
    @Test func aURLNamesTheUserThePasswordTheHostsAndTheDatabase() throws {
        let url = try PostgresStoreURL(
            parsing: "postgres://bureau:s%40cret@db1:5433,[::1],db2/events?connect_timeout=3")
        #expect(url.user == "bureau")
        #expect(url.password == "s@cret")
        #expect(url.hosts == [.init(name: "db1", port: 5433), .init(name: "::1"), .init(name: "db2")])
        #expect(url.database == "events")
        #expect(url.connectTimeout == .seconds(3))
        #expect(url.description == "postgres://bureau:***@db1:5433,[::1]:5432,db2:5432/events")
    }

    @Test func thePasswordMayComeFromPGPASSWORD() throws {
        let url = try PostgresStoreURL(parsing: "postgresql://bureau@db/events", environment: ["PGPASSWORD": "pw"])
        #expect(url.password == "pw")
        #expect(
            try PostgresStoreURL(parsing: "postgres://bureau:inline@db/events", environment: ["PGPASSWORD": "pw"])
                .password == "inline")
    }

    @Test(arguments: [
        ("mysql://u@h/d", "a store URL starts with postgres://"),
        ("postgres://u@h", "name the database after the hosts"),
        ("postgres://h/d", "name the user before the hosts"),
        ("postgres://u@h:0/d", "the port of h: '0' is out of range (give a whole number from 1 to 65535)"),
        ("postgres://u@h:99999/d", "the port of h: '99999' is out of range (give a whole number from 1 to 65535)"),
        ("postgres://u@h,/d", "a host is empty"),
        ("postgres://u@[::1/d", "lacks its ]"),
        (
            "postgres://u@h/d?sslmode=prefer",
            "sslmode=prefer is not supported: use disable, require, verify-ca, verify-full"
        ),
        ("postgres://u@h/d?sslmode", "sslmode= is not supported"),
        ("postgres://u@h/d?sslmode=verify-full&sslrootcert=", "sslrootcert names a file of CA certificates"),
        (
            "postgres://u@h/d?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
            "sslrootcert: cannot read /nonexistent/ca.pem: No such file or directory"
        ),
        ("postgres://u@h/d?sslrootcert=/etc/hostname", "sslrootcert needs sslmode=verify-full"),
        (
            "postgres://u@h/d?connect_timeout=nan",
            "connect_timeout, in whole seconds: 'nan' is not a whole number (give a whole number from 1 to 600)"
        ),
        ("postgres://u@h/d?pool=5", "unknown parameter 'pool'"),
        ("postgres://u@h/d?=", "unknown parameter ''"),
        ("postgres://u@h/d?=verify-full", "unknown parameter ''"),
        (
            "postgres://u@h/d?query_timeout=0",
            "query_timeout, in whole seconds: '0' is out of range (give a whole number from 1 to 3600)"
        ),
    ])
    func eachMistakeIsNamed(text: String, says: String) {
        let error = #expect(throws: PostgresStoreError.self) { try PostgresStoreURL(parsing: text) }
        #expect(error?.description.contains(says) == true, "\(String(describing: error))")
    }

    /// A CA certificate (self-signed, no key kept): what an `sslrootcert` file holds.
    static let caCertificate = """
        -----BEGIN CERTIFICATE-----
        MIIBiTCCAS+gAwIBAgIUSZGAnWwblow9GSFIFVYCwMgkMJowCgYIKoZIzj0EAwIw
        GTEXMBUGA1UEAwwOQnVyZWF1IHRlc3QgQ0EwIBcNMjYxMTI3MTIyNjQzWhgPMjEy
        NjExMDMxMjI2NDNaMBkxFzAVBgNVBAMMDkJ1cmVhdSB0ZXN0IENBMFkwEwYHKoZI
        zj0CAQYIKoZIzj0DAQcDQgAEMFxX9Mkn8IFv0N4C7gtaBofpSVGmxWFDBFv7hSnB
        2nWwpw9/wiXc339OXFSNyRijUqpdaVX2D1X9URG6VX0giaNTMFEwHQYDVR0OBBYE
        FPvtWLddo6RB/7paaPKhmd1UCXSdMB8GA1UdIwQYMBaAFPvtWLddo6RB/7paaPKh
        md1UCXSdMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIgWWBLMBfg
        g2jIkD70y+STaqJgdYpCLhrvHKc7TD3mmZECIQC3fV2F3ZLPY1I8xlrATqiwjFWd
        +emv6OGAsdnX5fegDA==
        -----END CERTIFICATE-----

        """

    @Test func tlsIsOffUnlessAskedForAndTakesTheModesAndTheCAFileLibpqDoes() throws {
        #expect(try PostgresStoreURL(parsing: "postgres://u@h/d").tls == .disable)
        #expect(try PostgresStoreURL(parsing: "postgres://u@h/d?sslmode=disable").tls == .disable)
        #expect(try PostgresStoreURL(parsing: "postgres://u@h/d?sslmode=require").tls == .require)
        let url = try PostgresStoreURL(parsing: "postgres://u@h/d?sslmode=verify-full")
        #expect(url.tls == .verifyFull)
        #expect(url.rootCertificateFile == nil, "the system's CAs")
        let directory = try TemporaryDirectory("pgurl")
        try Files.write(directory.file("my ca.pem"), Self.caCertificate)
        let pinned = try PostgresStoreURL(
            parsing: "postgres://u@h/d?sslmode=verify-ca&sslrootcert=\(directory.path)/my%20ca.pem&connect_timeout=2")
        #expect(pinned.tls == .verifyCA)
        #expect(pinned.rootCertificateFile == directory.file("my ca.pem"))
        #expect(pinned.connectTimeout == .seconds(2))
    }

    @Test func aCAFileThatHoldsNoCertificateIsNamed() throws {
        let directory = try TemporaryDirectory("pgurl")
        try Files.write(directory.file("empty.pem"), "")
        try Files.write(
            directory.file("key.pem"),
            "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n")
        try Files.write(
            directory.file("broken.pem"), "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
        for name in ["empty.pem", "key.pem", "broken.pem"] {
            let error = #expect(throws: PostgresStoreError.self) {
                try PostgresStoreURL(
                    parsing: "postgres://u@h/d?sslmode=verify-full&sslrootcert=\(directory.file(name))")
            }
            #expect(
                error?.description.contains("sslrootcert: \(directory.file(name))") == true,
                "\(String(describing: error))")
        }
    }

    @Test func aURLThatDoesNotParseIsShownWithoutItsPassword() {
        let error = #expect(throws: PostgresStoreError.self) {
            try PostgresStoreURL(parsing: "postgres://u:hunter2@h:x/d")
        }
        #expect(error?.description.contains("hunter2") == false)
        #expect(error?.description.contains("postgres://u:***@h:x/d") == true)
    }
}
