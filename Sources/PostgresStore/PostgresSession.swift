// Thread.sleep: the waits here are on threads of their own.
import Foundation
import Guards
import Logging

/// One connection to the writable server of a store, used from a thread of its own: every call
/// blocks until PostgreSQL answers.
///
/// Its callers wait where they would for a disk: the daemon's sequencer and catch-up threads,
/// a reducer host's snapshot thread (`OwnThread.run`), and the one-shot log tools, which have
/// the cooperative pool to themselves. A call waits at most the URL's `connect_timeout` per host
/// (once its name is resolved: libpq resolves it before the first wait) and `query_timeout`
/// per statement.
public final class PostgresSession: @unchecked Sendable {
    let connection: PostgresConnection
    let host: PostgresStoreURL.Host
    private let url: PostgresStoreURL
    private let logger: Logger

    private init(connection: PostgresConnection, host: PostgresStoreURL.Host, url: PostgresStoreURL, logger: Logger) {
        self.connection = connection
        self.host = host
        self.url = url
        self.logger = logger
    }

    /// How connecting again is spaced, at start and after a connection ended.
    public static let retryBackoff = Backoff(initial: .milliseconds(200), maximum: .seconds(5), jitter: 0.2)

    /// Connects to the first host of `url` that accepts writes (or, with `writable` false, that
    /// answers at all). A server that does not answer is tried again with backoff until `wait`
    /// has passed, each failure logged; a refused user, password or database is not.
    public static func connect(
        _ url: PostgresStoreURL, writable: Bool = true, wait: Duration = .zero, backoff: Backoff = retryBackoff,
        logger: Logger
    ) throws -> PostgresSession {
        let deadline = ContinuousClock.now + wait
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try connectOnce(url, writable: writable, logger: logger)
            } catch let error as PostgresStoreError {
                guard case .unreachable = error, ContinuousClock.now < deadline else { throw error }
                let delay = backoff.delay(attempt: attempt)
                logger.warning(
                    "the store is not reachable yet; trying again",
                    metadata: [
                        "store.url": "\(url)", "store.error": "\(error)", "store.attempt": "\(attempt)",
                        "store.retry_in_ms": "\(delay.inMilliseconds)",
                    ])
                Thread.sleep(forTimeInterval: min(delay, deadline - ContinuousClock.now).inSeconds)
            }
        }
    }

    /// One attempt at each host of `url`, in order. TLS that fails is not a server that may yet
    /// answer: it is thrown at once, as a refused password is.
    static func connectOnce(
        _ url: PostgresStoreURL, writable: Bool, logger: Logger
    ) throws -> PostgresSession {
        let tls = try url.connectionParameters()
        var reasons: [String] = []
        for host in url.hosts {
            // What the URL does not set is libpq's default, its environment (PG*) included; these
            // are set so that the environment cannot change what the store relies on: one host
            // at a time, whichever kind (it asks itself whether the host takes writes).
            var parameters = [
                ("host", host.name), ("port", "\(host.port)"), ("user", url.user), ("dbname", url.database),
                ("application_name", "bureau"), ("target_session_attrs", "any"),
            ]
            // Without one libpq looks in ~/.pgpass (PGPASSWORD is already in the URL's).
            if let password = url.password { parameters.append(("password", password)) }
            let connection: PostgresConnection
            do throws(PostgresConnection.ConnectFailure) {
                connection = try PostgresConnection.connect(
                    parameters + tls, timeout: url.connectTimeout, logger: logger)
            } catch {
                if let refusal = PostgresStoreError.refusal(in: error.message) {
                    throw PostgresStoreError.refused("\(url)", reason: "\(host): \(refusal)")
                }
                if let failure = url.tlsFailure(error.message, host: host) {
                    throw PostgresStoreError.tls("\(url)", reason: failure)
                }
                reasons.append("\(host): \(error.message)")
                continue
            }
            let session = PostgresSession(connection: connection, host: host, url: url, logger: logger)
            if writable {
                do {
                    let rows = try session.query(
                        "SELECT pg_is_in_recovery()", what: "asking whether \(host) is a standby")
                    if try rows.first?.bool(0) == true {
                        reasons.append("\(host) is a standby (read-only)")
                        session.close()
                        continue
                    }
                } catch {
                    session.close()
                    reasons.append("\(host): \(error)")
                    continue
                }
            }
            return session
        }
        throw PostgresStoreError.unreachable(
            "\(url)", reason: reasons.joined(separator: "; ") + (writable ? " (a writable server is needed)" : ""))
    }

    /// Runs `query` and returns its rows; a failure names `what` was being done.
    ///
    /// Waits at most the URL's query timeout: a server that went away without a word (a host that
    /// died, a partition) would otherwise hold the caller for ever. The connection is then of
    /// no further use, and closed.
    @discardableResult
    public func query(_ query: PostgresQuery, what: String) throws(PostgresStoreError) -> [PostgresRow] {
        do throws(PostgresConnection.Failure) {
            return try connection.query(query, timeout: url.queryTimeout)
        } catch {
            switch error {
            case .server(let sqlState, let message):
                throw .statement(what, sqlState: sqlState, message: message)
            case .closed(let message):
                throw .statement(what, sqlState: nil, message: "the connection to the store ended: \(message)")
            case .timedOut:
                throw .statement(
                    what, sqlState: nil,
                    message:
                        "the store did not answer within \(url.queryTimeout.secondsText()) s (query_timeout); the connection was closed"
                )
            case .unexpected(let status):
                // Where the protocol stands is unknown: the connection is not used again.
                connection.close()
                throw .statement(
                    what, sqlState: nil,
                    message: "an answer of an unexpected kind (\(status)); the connection was closed")
            }
        }
    }

    /// Whether the connection is gone (the server or the network ended it).
    var isClosed: Bool { connection.isClosed }

    /// Closes the connection (libpq's goodbye is sent without waiting for an answer).
    public func close() {
        connection.close()
    }
}
