import Guards

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where a PostgreSQL store is: `postgres://USER[:PASSWORD]@HOST[:PORT][,HOST[:PORT]…]/DATABASE`.
///
/// Several hosts name a primary and its standbys: a connection tries them in order and keeps
/// the first that accepts writes (asking each `pg_is_in_recovery()`, as libpq's
/// `target_session_attrs=read-write` would), so a daemon finds a promoted standby by itself. The password may instead come from `PGPASSWORD`, so that
/// it stays out of `ps` and shell history. ``description`` never shows the password.
///
/// TLS is libpq's `sslmode` (``TLSMode``), off unless asked for; `sslrootcert=FILE` names the CA
/// certificates (PEM) a server's certificate must be signed by, read when the URL is parsed so
/// that a missing or unreadable file is said at once, by every command that takes the URL.
public struct PostgresStoreURL: Sendable, Equatable, CustomStringConvertible {
    public struct Host: Sendable, Equatable, CustomStringConvertible {
        public var name: String
        public var port: Int

        public init(name: String, port: Int = 5432) {
            self.name = name
            self.port = port
        }

        public var description: String { name.contains(":") ? "[\(name)]:\(port)" : "\(name):\(port)" }
    }

    public var hosts: [Host]
    public var user: String
    public var password: String?
    public var database: String
    /// How long one connection attempt to one host may take.
    public var connectTimeout: Duration = .seconds(5)
    /// How long one statement may take before its connection is given up as dead.
    public var queryTimeout: Duration = .seconds(30)
    /// Whether connections are encrypted, and which server certificates they accept.
    public var tls: TLSMode = .disable
    /// The PEM file of the CA certificates a server's certificate must be signed by; nil for
    /// the system's trusted CAs (with `verify-ca` and `verify-full`) or none (`require`).
    public var rootCertificateFile: String?

    public init(hosts: [Host], user: String, password: String?, database: String) {
        self.hosts = hosts
        self.user = user
        self.password = password
        self.database = database
    }

    /// Whether `text` is meant as a PostgreSQL URL (it may still be malformed).
    public static func isPostgres(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Parses a store URL; the error says which part is wrong.
    ///
    /// - Parameter environment: where `PGPASSWORD` is looked up when the URL has no password.
    public init(parsing text: String, environment: [String: String] = [:]) throws(PostgresStoreError) {
        func bad(_ reason: String) -> PostgresStoreError {
            .badURL(Self.redacted(text), reason: reason)
        }
        guard let schemeEnd = text.range(of: "://"),
            ["postgres", "postgresql"].contains(String(text[..<schemeEnd.lowerBound]))
        else {
            throw bad("a store URL starts with postgres://")
        }
        var rest = Substring(text[schemeEnd.upperBound...])
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        guard let slash = rest.firstIndex(of: "/") else {
            throw bad("name the database after the hosts: postgres://USER@HOST:PORT/DATABASE")
        }
        let authority = rest[..<slash]
        guard let database = String(rest[rest.index(after: slash)...]).removingPercentEncoding, !database.isEmpty,
            !database.contains("/")
        else {
            throw bad("name the database after the hosts: postgres://USER@HOST:PORT/DATABASE")
        }
        guard let at = authority.lastIndex(of: "@") else {
            throw bad("name the user before the hosts: postgres://USER@HOST:PORT/DATABASE")
        }
        let userInfo = authority[..<at]
        let (userPart, passwordPart): (Substring, Substring?) =
            if let colon = userInfo.firstIndex(of: ":") {
                (userInfo[..<colon], userInfo[userInfo.index(after: colon)...])
            } else {
                (userInfo, nil)
            }
        guard let user = String(userPart).removingPercentEncoding, !user.isEmpty else {
            throw bad("the user is empty")
        }
        var password: String?
        if let passwordPart {
            guard let decoded = String(passwordPart).removingPercentEncoding else {
                throw bad("the password's percent-encoding is malformed")
            }
            password = decoded
        }
        var hosts: [Host] = []
        for entry in authority[authority.index(after: at)...].split(separator: ",", omittingEmptySubsequences: false) {
            hosts.append(try Self.host(entry, bad: bad))
        }
        guard hosts.count <= 8 else { throw bad("at most 8 hosts, not \(hosts.count)") }
        self.init(
            hosts: hosts, user: user, password: password ?? environment["PGPASSWORD"], database: database)
        for parameter in query.split(separator: "&") where !parameter.isEmpty {
            // "=x" has an empty name: kept as one, so that it is named as unknown below.
            let parts = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            switch (parts.first ?? "", parts.count == 2 ? parts[1] : nil) {
            case ("sslmode", let mode):
                guard let mode, let parsed = TLSMode(rawValue: mode) else {
                    throw bad(
                        "sslmode=\(mode ?? "") is not supported: use "
                            + TLSMode.allCases.map(\.rawValue).joined(separator: ", "))
                }
                tls = parsed
            case ("sslrootcert", let file):
                guard let file = file?.removingPercentEncoding, !file.isEmpty else {
                    throw bad("sslrootcert names a file of CA certificates (PEM)")
                }
                rootCertificateFile = file
            case ("connect_timeout", let seconds?):
                do {
                    connectTimeout = .seconds(try BoundedNumber.integer(seconds, in: 1...600))
                } catch {
                    throw bad("connect_timeout, in whole seconds: \(error)")
                }
            case ("query_timeout", let seconds?):
                do {
                    queryTimeout = .seconds(try BoundedNumber.integer(seconds, in: 1...3600))
                } catch {
                    throw bad("query_timeout, in whole seconds: \(error)")
                }
            default:
                let modes = TLSMode.allCases.map(\.rawValue).joined(separator: "|")
                throw bad(
                    "unknown parameter '\(parts[0])': known are sslmode=\(modes), sslrootcert=FILE, "
                        + "connect_timeout=SECONDS and query_timeout=SECONDS")
            }
        }
        if rootCertificateFile != nil {
            guard tls != .disable else {
                throw bad(
                    "sslrootcert needs sslmode=verify-full (or verify-ca, require): "
                        + "with sslmode=disable nothing is encrypted")
            }
            do throws(TLSProblem) {
                try checkRootCertificates()
            } catch {
                throw bad(error.reason)
            }
        }
    }

    private static func host(
        _ entry: Substring, bad: (String) -> PostgresStoreError
    ) throws(PostgresStoreError) -> Host {
        var name: Substring
        var port: Substring?
        if entry.hasPrefix("[") {
            guard let close = entry.firstIndex(of: "]") else { throw bad("the IPv6 address '\(entry)' lacks its ]") }
            name = entry[entry.index(after: entry.startIndex)..<close]
            let after = entry[entry.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw bad("'\(entry)' is not HOST:PORT") }
                port = after.dropFirst()
            }
        } else if let colon = entry.lastIndex(of: ":") {
            name = entry[..<colon]
            port = entry[entry.index(after: colon)...]
        } else {
            name = entry
        }
        guard !name.isEmpty else { throw bad("a host is empty") }
        guard let port else { return Host(name: String(name)) }
        do {
            return Host(name: String(name), port: try BoundedNumber.integer(String(port), in: 1...65535))
        } catch {
            throw bad("the port of \(name): \(error)")
        }
    }

    /// The URL with its password replaced, for messages.
    public var description: String {
        let credentials = password == nil ? user : "\(user):***"
        return "postgres://\(credentials)@\(hosts.map(\.description).joined(separator: ","))/\(database)"
    }

    /// `text` with whatever stands between `:` and `@` of its user part replaced, for messages about a URL that did not parse.
    static func redacted(_ text: String) -> String {
        guard let schemeEnd = text.range(of: "://"), let at = text[schemeEnd.upperBound...].lastIndex(of: "@") else {
            return text
        }
        let userInfo = text[schemeEnd.upperBound..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + ":***" + String(text[at...])
    }
}
