// Thread.sleep, NSLock: the waits here are on the caller's thread, as every statement's are.
import Foundation
import Guards
import Logging
import Metrics

/// A connection to a store that is made again when it ends, for what may safely be done twice
/// (reading, replacing a snapshot row): a reducer host's snapshots and the log's readers ride
/// out a failover with it, as the daemon does by reopening its log.
///
/// A statement whose connection ended (the server was killed, restarted or promoted away, the
/// network cut, the query timeout passed) or whose server no longer takes writes is run once
/// more at once on a new connection, to whichever host of the URL now accepts writes. When no
/// host does, the call fails, and calls until the next attempt is due (the shared ``Backoff``,
/// ``PostgresSession/retryBackoff``) fail at once without trying, so that a store that is away
/// is neither hammered nor waited for by a caller that must go on; a caller that may wait
/// passes `wait`. Each attempt and its outcome is logged, and each connection made again is
/// counted (`bureau_store_reconnects_total`, ``PostgresStoreMetrics``).
///
/// The writer's own connection never reconnects: its lock is its fence (``PostgresEventLog``).
final class ReconnectingSession: @unchecked Sendable {
    let url: PostgresStoreURL
    private let writable: Bool
    private let backoff: Backoff
    private let logger: Logger
    private let reconnects: Counter
    /// Held for a whole statement: one at a time, so that no two callers connect at once.
    private let lock = NSLock()
    private var session: PostgresSession?
    /// Connection attempts failed in a row, and when the next is due.
    private var failures = 0
    private var nextAttempt: ContinuousClock.Instant?
    private var lastFailure = ""

    /// Connects, retrying a server that does not answer for `wait` (as ``PostgresSession/connect``).
    ///
    /// - Parameter reconnects: counts each connection made again after one ended.
    init(
        _ url: PostgresStoreURL, writable: Bool = true, wait: Duration, backoff: Backoff = PostgresSession.retryBackoff,
        reconnects: Counter, logger: Logger
    ) throws {
        self.url = url
        self.writable = writable
        self.backoff = backoff
        self.reconnects = reconnects
        self.logger = logger
        session = try PostgresSession.connect(url, writable: writable, wait: wait, backoff: backoff, logger: logger)
    }

    deinit {
        session?.close()
    }

    /// The host of the current connection, if there is one.
    var host: PostgresStoreURL.Host? { lock.withLock { session?.host } }

    /// Runs `body` on the connection, connecting again first if it ended; if the connection ends
    /// under `body`, runs it once more on a new one. With `wait`, keeps trying a store that
    /// cannot be reached (spaced by the backoff) until `wait` has passed.
    @discardableResult
    func run<Value>(_ what: String, wait: Duration = .zero, _ body: (PostgresSession) throws -> Value) throws -> Value {
        let deadline = ContinuousClock.now + wait
        return try lock.withLock {
            while true {
                do {
                    return try runOnce(what, body)
                } catch PostgresStoreError.unreachable(let url, let reason) {
                    guard let due = nextAttempt, due <= deadline else {
                        throw PostgresStoreError.unreachable(url, reason: reason)
                    }
                    Thread.sleep(forTimeInterval: max(due - ContinuousClock.now, .zero).inSeconds)
                }
            }
        }
    }

    private func runOnce<Value>(_ what: String, _ body: (PostgresSession) throws -> Value) throws -> Value {
        var retried = false
        while true {
            let current = try connected()
            do {
                return try body(current)
            } catch let error as PostgresStoreError where Self.endsConnection(error) || current.isClosed {
                current.close()
                session = nil
                logger.warning(
                    "the connection to the store ended; connecting again",
                    metadata: [
                        "store.url": "\(url)", "store.host": "\(current.host)", "store.doing": "\(what)",
                        "store.error": "\(error)",
                    ])
                if retried { throw error }
                retried = true
            }
        }
    }

    /// The connection, made again if there is none and an attempt is due.
    private func connected() throws -> PostgresSession {
        if let session { return session }
        if let nextAttempt, ContinuousClock.now < nextAttempt {
            throw PostgresStoreError.unreachable(
                "\(url)",
                reason:
                    "\(lastFailure); trying again in \((nextAttempt - ContinuousClock.now).inMilliseconds) ms")
        }
        do {
            let made = try PostgresSession.connectOnce(url, writable: writable, logger: logger)
            logger.notice(
                "connected to the store again",
                metadata: ["store.url": "\(url)", "store.host": "\(made.host)", "store.attempt": "\(failures + 1)"])
            session = made
            failures = 0
            nextAttempt = nil
            reconnects.increment()
            return made
        } catch {
            // A refusal (password, TLS) is spaced out too: every caller would otherwise try it again.
            failures += 1
            let delay = backoff.delay(attempt: failures)
            nextAttempt = ContinuousClock.now + delay
            lastFailure =
                if case PostgresStoreError.unreachable(_, let reason) = error { reason } else { "\(error)" }
            logger.warning(
                "could not connect to the store again; trying later",
                metadata: [
                    "store.url": "\(url)", "store.error": "\(lastFailure)", "store.attempt": "\(failures)",
                    "store.retry_in_ms": "\(delay.inMilliseconds)",
                ])
            throw error
        }
    }

    /// Whether `error` means the connection is of no further use: it ended (no SQLSTATE: the
    /// statement never got an answer), the server is going away (class 57: shutdown, crash) or
    /// the connection failed (class 08), or the server no longer takes writes (25006: a
    /// primary turned standby). Any other server error leaves the connection as good as before.
    static func endsConnection(_ error: PostgresStoreError) -> Bool {
        guard case .statement(_, let sqlState, _) = error else { return false }
        guard let sqlState else { return true }
        return sqlState.hasPrefix("08") || sqlState.hasPrefix("57") || sqlState == "25006"
    }
}
