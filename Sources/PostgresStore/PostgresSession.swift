// Thread.sleep: the waits here are on threads of their own.
import Foundation
import Guards
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// One connection to the writable server of a store, used from a thread of its own: every call
/// blocks until PostgreSQL answers.
///
/// The log's callers are the daemon's sequencer and catch-up threads and the log tools, none of
/// which run on Swift's cooperative pool; blocking them on a future that an event loop thread
/// fulfils is what they already do for disk I/O.
final class PostgresSession: @unchecked Sendable {
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
    static let retryBackoff = Backoff(initial: .milliseconds(200), maximum: .seconds(5), jitter: 0.2)

    /// Connects to the first host of `url` that accepts writes (or, with `writable` false, that
    /// answers at all). A server that does not answer is tried again with backoff until `wait`
    /// has passed, each failure logged; a refused user, password or database is not.
    static func connect(
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
        let tls = try url.connectionTLS()
        var reasons: [String] = []
        for host in url.hosts {
            var configuration = PostgresConnection.Configuration(
                host: host.name, port: host.port, username: url.user, password: url.password, database: url.database,
                tls: tls)
            configuration.options.connectTimeout = .milliseconds(url.connectTimeout.inMilliseconds)
            let connection: PostgresConnection
            do {
                connection = try PostgresConnection.connect(
                    on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: 1,
                    logger: logger
                ).wait()
            } catch {
                let sqlState = PostgresStoreError.sqlState(of: error)
                let message = PostgresStoreError.message(of: error)
                if PostgresStoreError.isRefusal(sqlState) {
                    throw PostgresStoreError.refused("\(url)", reason: "\(host): \(message)")
                }
                if let failure = url.tlsFailure(error, host: host) {
                    throw PostgresStoreError.tls("\(url)", reason: failure)
                }
                if (error as? PSQLError)?.code == .authMechanismRequiresPassword {
                    throw PostgresStoreError.refused(
                        "\(url)", reason: "\(host) asks for a password: put it in the URL or in PGPASSWORD")
                }
                reasons.append("\(host): \(message)")
                continue
            }
            let session = PostgresSession(connection: connection, host: host, url: url, logger: logger)
            if writable {
                do {
                    let rows = try session.query(
                        "SELECT pg_is_in_recovery()", what: "asking whether \(host) is a standby")
                    if try rows.first?.decode(Bool.self) == true {
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
    /// Waits at most the URL's query timeout: a server that went away without a word (a host
    /// that died, a partition) would otherwise hold the caller for ever. The connection is then
    /// of no further use, and closed.
    @discardableResult
    func query(_ query: PostgresQuery, what: String) throws -> [PostgresRow] {
        let result: PostgresQueryResult
        do {
            result = try Self.wait(
                for: connection.query(query, logger: logger), orUntil: connection.closeFuture, atMost: url.queryTimeout)
        } catch let error as PostgresStoreError {
            close()
            throw PostgresStoreError.statement(what, sqlState: nil, message: "\(error)")
        } catch {
            throw PostgresStoreError.statement(
                what, sqlState: PostgresStoreError.sqlState(of: error), message: PostgresStoreError.message(of: error))
        }
        return Array(result.rows)
    }

    /// The value of `future`; an error as soon as `closed` completes first (the connection
    /// ended: a statement in flight may never be answered), or once `limit` has passed.
    static func wait<Value: Sendable>(
        for future: EventLoopFuture<Value>, orUntil closed: EventLoopFuture<Void>? = nil, atMost limit: Duration
    ) throws -> Value {
        let outcome = Mutex<Result<Value, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        future.whenComplete { result in
            outcome.withLock { $0 = $0 ?? result }
            done.signal()
        }
        closed?.whenComplete { _ in
            outcome.withLock { $0 = $0 ?? .failure(PostgresStoreError.connectionClosed) }
            done.signal()
        }
        guard done.wait(timeout: .now() + .milliseconds(Int(limit.inMilliseconds))) == .success,
            let result = outcome.withLock({ $0 })
        else {
            throw PostgresStoreError.timedOut(seconds: limit.inSeconds)
        }
        return try result.get()
    }

    /// Whether the connection is gone (the server or the network ended it).
    var isClosed: Bool { connection.isClosed }

    /// Closes the connection, waiting a little for a clean goodbye; a server that does not
    /// answer is left to notice the socket closing.
    func close() {
        _ = try? Self.wait(for: connection.close(), atMost: .seconds(2))
    }
}
