import Foundation
import Guards
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A PostgreSQL server from Debian's packages, made for tests and benchmarks in a directory of
/// its own (`initdb`, then `pg_ctl` on a free port, its socket in that directory) and stopped by
/// ``stop()``.
///
/// initdb refuses root, so as root the server runs as the `postgres` user (`runuser`), in a
/// directory under /tmp that user owns. TCP clients log in as `postgres` with ``password``
/// (SCRAM); the socket trusts local users. ``unavailable`` says why a server cannot be made
/// here, so that a test is skipped saying so.
public final class PostgresServer: @unchecked Sendable {
    public let directory: String
    public let port: Int
    public let password = PostgresServer.defaultPassword
    /// The password of the `postgres` user of every server made here.
    public static let defaultPassword = "bureau-test-password"
    private let binaries: String
    private let stopped = Mutex(false)

    /// Where initdb and pg_ctl are, newest version first.
    static let binaryDirectory: String? = {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return versions.compactMap(Int.init).sorted(by: >).map { "\(root)/\($0)/bin" }
            .first { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") }
    }()

    /// Why a server cannot be started here; nil when it can.
    public static let unavailable: String? = {
        guard binaryDirectory != nil else {
            return "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): run tools/setup"
        }
        if geteuid() == 0 {
            guard getpwnam("postgres") != nil else { return "running as root and there is no postgres user for initdb" }
            guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser") else {
                return "running as root without /usr/sbin/runuser to start PostgreSQL as postgres"
            }
        }
        return nil
    }()

    private init(directory: String, port: Int, binaries: String) {
        self.directory = directory
        self.port = port
        self.binaries = binaries
    }

    /// The certificate a server offers TLS with, and its private key: PEM files, copied into
    /// the server's directory (readable by its user only) when it starts.
    public struct Certificate: Sendable {
        public var certificateFile: String
        public var keyFile: String

        public init(certificateFile: String, keyFile: String) {
            self.certificateFile = certificateFile
            self.keyFile = keyFile
        }
    }

    /// Makes a cluster and starts it; waits until it accepts connections.
    ///
    /// - Parameters:
    ///   - port: the TCP port; a free one when nil.
    ///   - settings: extra `postgresql.conf` lines (`name = value`).
    ///   - certificate: TLS on (`ssl = on`) with this certificate; plain TCP only when nil.
    public static func start(
        port: Int? = nil, settings: [String] = [], certificate: Certificate? = nil
    ) throws -> PostgresServer {
        if let unavailable { throw TestServerError(unavailable) }
        guard let binaries = binaryDirectory else { throw TestServerError("no PostgreSQL binaries") }
        return try make(port: port ?? TCPPorts.free(), binaries: binaries) { server in
            try server.write(server.password + "\n", to: "password")
            try server.asServerUser([
                binaries + "/initdb", "-D", server.data, "-U", "postgres", "--auth-local=trust",
                "--auth-host=scram-sha-256", "--pwfile=\(server.directory)/password", "-E", "UTF8", "--no-sync",
                "--no-instructions",
            ])
            var tls: [String] = []
            if let certificate {
                // PostgreSQL refuses a key that others may read.
                try server.write(
                    try String(contentsOfFile: certificate.certificateFile, encoding: .utf8), to: "server.crt")
                try server.write(try String(contentsOfFile: certificate.keyFile, encoding: .utf8), to: "server.key")
                guard chmod(server.directory + "/server.key", 0o600) == 0 else {
                    throw TestServerError("chmod \(server.directory)/server.key: errno \(errno)")
                }
                tls = [
                    "ssl = on", "ssl_cert_file = '\(server.directory)/server.crt'",
                    "ssl_key_file = '\(server.directory)/server.key'",
                ]
            }
            return [
                "listen_addresses = '127.0.0.1'", "max_connections = 100", "shared_buffers = 64MB", "fsync = on",
                "synchronous_commit = on",
                // Shared memory segments as files in the data directory, removed with it: as POSIX
                // segments in /dev/shm, a server stopped `-m immediate` or killed -9 left them behind
                // (some 6 MB of memory a run of tests, until the machine restarts).
                "dynamic_shared_memory_type = mmap",
            ] + tls + settings
        }
    }

    /// A server in a new directory: `create` makes its cluster (initdb, or a base backup) and
    /// returns settings for it; then its port and socket are set and it is started. Stopped
    /// and removed if any step fails.
    private static func make(
        port: Int, binaries: String, _ create: (PostgresServer) throws -> [String]
    ) throws -> PostgresServer {
        let server = PostgresServer(directory: try makeDirectory(), port: port, binaries: binaries)
        do {
            let settings =
                try create(server) + ["port = \(port)", "unix_socket_directories = '\(server.directory)'"]
            try server.append(settings.joined(separator: "\n") + "\n", to: "data/postgresql.conf")
            try server.asServerUser([
                binaries + "/pg_ctl", "-D", server.data, "-l", "\(server.directory)/server.log", "-w", "-t", "60",
                "start",
            ])
        } catch {
            server.stop()
            throw error
        }
        return server
    }

    /// Settings for a primary whose commits wait for a synchronous streaming standby.
    public static let synchronousPrimarySettings = [
        "wal_level = replica", "max_wal_senders = 4", "synchronous_standby_names = '*'", "wal_keep_size = 64MB",
    ]

    /// A streaming standby of this server (`pg_basebackup -R` over TCP, as the postgres user), on
    /// a port of its own, started and caught up. With ``synchronousPrimarySettings`` on this
    /// server, its commits wait for the standby.
    public func startStandby() throws -> PostgresServer {
        try Self.make(port: try TCPPorts.free(), binaries: binaries) { server in
            try server.asServerUser([
                "/usr/bin/env", "PGPASSWORD=\(password)", binaries + "/pg_basebackup", "-h", "127.0.0.1", "-p",
                "\(port)", "-U", "postgres", "-D", server.data, "-R", "-X", "stream", "--no-sync",
            ])
            // The copy's settings are the primary's; make() gives this one its own port and
            // socket. And once promoted it has no standby of its own to wait for: as an
            // operator would, it commits without one (else every commit waits until one joins).
            return ["synchronous_standby_names = ''"]
        }
    }

    /// Makes a standby the primary (`pg_ctl promote`), waiting until it accepts writes.
    public func promote() throws {
        try asServerUser([binaries + "/pg_ctl", "-D", data, "-w", "-t", "60", "promote"])
    }

    /// Kills the server and every process of it with SIGKILL, as a machine that dies would end it.
    public func kill9() {
        guard let postmaster = pid else { return }
        kill(postmaster, SIGKILL)
        // Backends notice a dead postmaster only now and then: end them too, by parent.
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let child = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, pid_t(fields[1]) == postmaster { kill(child, SIGKILL) }
        }
    }

    var data: String { directory + "/data" }

    /// A directory in the temporary directory (`TMPDIR`, or /tmp) that the server's user owns.
    /// As root, `TMPDIR` must let that user through (tools/test makes its own mode 1777).
    static func makeDirectory() throws -> String {
        let directory = NSTemporaryDirectory() + "bureau-pg-\(UUID().uuidString.prefix(8).lowercased())"
        guard mkdir(directory, 0o700) == 0 else { throw TestServerError("mkdir \(directory): errno \(errno)") }
        if geteuid() == 0, let user = getpwnam("postgres") {
            guard chown(directory, user.pointee.pw_uid, user.pointee.pw_gid) == 0 else {
                throw TestServerError("chown \(directory): errno \(errno)")
            }
        }
        return directory
    }

    /// A store URL for `database` on this server, with the password.
    public func url(database: String, user: String = "postgres", password: String? = nil) -> String {
        "postgres://\(user):\(password ?? self.password)@127.0.0.1:\(port)/\(database)"
    }

    /// Creates an empty database with a fresh name and returns its name.
    public func createDatabase(prefix: String = "test") throws -> String {
        let name = "\(prefix)_\(UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: ""))"
        try sql("CREATE DATABASE \(name)")
        return name
    }

    /// Runs one statement through `psql` over the server's socket, as `postgres`; returns its output.
    @discardableResult
    public func sql(_ statement: String, database: String = "postgres") throws -> String {
        guard let binaries = Self.binaryDirectory else { throw TestServerError("no PostgreSQL binaries") }
        return try SystemCommand.run([
            binaries + "/psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", directory, "-p", "\(port)",
            "-U", "postgres", "-d", database, "-c", statement,
        ])
    }

    /// Ends every connection to `database` (what a server restart or a failover does to them)
    /// and returns how many there were. It returns once each of their backends has exited: a
    /// backend told to end releases its locks (a writer's advisory lock among them) only as it
    /// exits, after its client has seen the connection go, so a test that went on at once could
    /// find the lock still held. Throws if one is still there after `timeout`.
    @discardableResult
    public func endConnections(to database: String, timeout: Duration = .seconds(10)) throws -> Int {
        let milliseconds = timeout.inMilliseconds
        // pg_terminate_backend with a timeout (PostgreSQL 14 on) waits for the backend to exit
        // and answers false if it did not in time.
        let answer = try sql(
            """
            SELECT count(*) || ' ' || count(*) FILTER (WHERE NOT pg_terminate_backend(pid, \(milliseconds)))
            FROM pg_stat_activity WHERE datname = '\(database)' AND pid <> pg_backend_pid()
            """
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        let counts = answer.split(separator: " ").compactMap { Int($0) }
        guard counts.count == 2 else {
            throw TestServerError("ending the connections to \(database): psql said \(answer)")
        }
        guard counts[1] == 0 else {
            throw TestServerError(
                "\(counts[1]) of \(counts[0]) backends of \(database) still there after \(timeout.secondsText()) s")
        }
        return counts[0]
    }

    /// The postmaster's process id, from its pid file, while that process is this server's:
    /// running, with this data directory on its command line. A pid file a killed server left
    /// behind names a process that is gone, or another that has its number since, which must
    /// never be signalled.
    public var pid: pid_t? {
        guard let text = try? String(contentsOfFile: data + "/postmaster.pid", encoding: .utf8),
            let first = text.split(separator: "\n").first, let pid = pid_t(first),
            let command = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))
        else { return nil }
        let arguments = command.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        return arguments.contains(data) ? pid : nil
    }

    /// Stops the server and deletes its directory. At once (`pg_ctl stop -m immediate`): a clean
    /// shutdown's checkpoint would write out every database the tests made, only for the
    /// directory to be deleted next; the test process waits for it as it exits.
    public func stop() {
        let already = stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        guard !already else { return }
        if pid != nil {
            do {
                try asServerUser([binaries + "/pg_ctl", "-D", data, "-m", "immediate", "-w", "-t", "30", "stop"])
            } catch {
                // Not left running under a directory deleted next: ended as a crash would end it.
                FileHandle.standardError.write(
                    Data("PostgresServer: pg_ctl stop failed (\(error)); killing the server\n".utf8))
                kill9()
            }
        }
        // The directory is scratch: what cannot be removed stays in TMPDIR, which the run removes.
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { stop() }

    private func asServerUser(_ arguments: [String]) throws {
        if geteuid() == 0 {
            try SystemCommand.run(["/usr/sbin/runuser", "-u", "postgres", "--"] + arguments)
        } else {
            try SystemCommand.run(arguments)
        }
    }

    private func write(_ text: String, to name: String) throws {
        try text.write(toFile: directory + "/" + name, atomically: false, encoding: .utf8)
        if geteuid() == 0, let user = getpwnam("postgres") {
            _ = chown(directory + "/" + name, user.pointee.pw_uid, user.pointee.pw_gid)
        }
    }

    private func append(_ text: String, to name: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: directory + "/" + name))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
    }
}
