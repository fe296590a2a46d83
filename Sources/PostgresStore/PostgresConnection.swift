import CLibpq
import Guards
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// One libpq connection, driven without blocking inside libpq: every wait is a `poll` on its
/// socket that ends at a deadline, so that a server that went away without a word (a host that
/// died, a partition) holds the caller no longer than the timeout it gave.
///
/// Not thread-safe (libpq's connections are not): one caller at a time, on a thread of its own
/// (``PostgresSession`` says why). Statements are sent with their parameters apart from the SQL
/// (``PostgresQuery``) and answered in binary (``PostgresRow``).
final class PostgresConnection: @unchecked Sendable {
    /// Why a connection could not be made: libpq's message, as it gives it.
    struct ConnectFailure: Error {
        var message: String
        var timedOut = false
    }

    /// Why a statement got no answer, or the server's refusal of it.
    enum Failure: Error {
        /// The server answered with an error: its SQLSTATE, message and detail.
        case server(sqlState: String?, message: String)
        /// The connection ended (or was already gone) before the answer came.
        case closed(String)
        /// No answer within the timeout; the connection was closed.
        case timedOut
        /// An answer of a kind this code does not read (a bug, not a state of the server).
        case unexpected(String)
    }

    private var connection: OpaquePointer?
    /// Kept as long as the connection: libpq calls it with each notice the server sends.
    private let notices: NoticeSink

    private init(_ connection: OpaquePointer, logger: Logger) {
        self.connection = connection
        notices = NoticeSink(logger: logger)
    }

    deinit {
        close()
    }

    /// Connects with libpq's `keywords` (host, port, user, …), taking at most `timeout`.
    static func connect(
        _ parameters: [(String, String)], timeout: Duration, logger: Logger
    ) throws(ConnectFailure) -> PostgresConnection {
        let deadline = ContinuousClock.now + timeout
        // No GSSAPI encryption attempt (libpq tries it first where Kerberos is set up) and no
        // fallback to plain text: the URL's sslmode alone decides.
        let all = [("gssencmode", "disable")] + parameters
        let made: OpaquePointer? = withCStrings(all.map(\.0)) { keywords in
            withCStrings(all.map(\.1)) { values in PQconnectStartParams(keywords, values, 0) }
        }
        guard let made else { throw ConnectFailure(message: "out of memory") }
        let connection = PostgresConnection(made, logger: logger)
        guard PQstatus(made) != CONNECTION_BAD else { throw ConnectFailure(message: connection.errorMessage) }
        // The server's notices would otherwise go to stderr: warnings go to the log instead.
        PQsetNoticeReceiver(
            made,
            { context, result in
                guard let context, let result else { return }
                Unmanaged<NoticeSink>.fromOpaque(context).takeUnretainedValue().receive(result)
            }, Unmanaged.passUnretained(connection.notices).toOpaque())
        // libpq's protocol: a connection just started is polled as if writing were awaited.
        var status = PGRES_POLLING_WRITING
        while true {
            switch status {
            case PGRES_POLLING_OK:
                guard PQsetnonblocking(made, 1) == 0 else {
                    throw ConnectFailure(message: connection.errorMessage)
                }
                return connection
            case PGRES_POLLING_FAILED:
                throw ConnectFailure(message: connection.errorMessage)
            default:
                let event = Int16(status == PGRES_POLLING_READING ? POLLIN : POLLOUT)
                guard connection.wait(for: event, until: deadline) else {
                    throw ConnectFailure(
                        message: "no answer within \(timeout.inMilliseconds) ms (connect_timeout)", timedOut: true)
                }
                status = PQconnectPoll(made)
            }
        }
    }

    /// Whether the connection is gone (the server or the network ended it, or it was closed).
    var isClosed: Bool {
        guard let connection else { return true }
        return PQstatus(connection) != CONNECTION_OK
    }

    /// Closes the connection: libpq says goodbye without waiting for an answer.
    func close() {
        guard let connection else { return }
        self.connection = nil
        PQfinish(connection)
    }

    /// Runs `query` and returns the rows of its last result; waits at most `timeout`, after
    /// which the connection is closed (a statement in flight may never be answered).
    func query(_ query: PostgresQuery, timeout: Duration) throws(Failure) -> [PostgresRow] {
        guard let connection, !isClosed else { throw .closed("the connection to the store ended") }
        let deadline = ContinuousClock.now + timeout
        let sent: Int32 = query.withLibpqArrays { types, values, lengths, formats in
            PQsendQueryParams(connection, query.sql, Int32(query.parameters.count), types, values, lengths, formats, 1)
        }
        guard sent == 1 else { throw .closed(errorMessage) }
        // The statement may not have left in one write (a large batch): flushed as the socket takes it.
        while true {
            let flushed = PQflush(connection)
            if flushed == 0 { break }
            guard flushed == 1 else { throw .closed(errorMessage) }
            guard wait(for: Int16(POLLOUT | POLLIN), until: deadline) else { throw timedOut() }
            // Reading while writing: libpq keeps the answer for PQgetResult.
            guard PQconsumeInput(connection) == 1 else { throw .closed(errorMessage) }
        }
        var rows: [PostgresRow] = []
        var failure: Failure?
        while true {
            while PQisBusy(connection) == 1 {
                guard wait(for: Int16(POLLIN), until: deadline) else { throw timedOut() }
                guard PQconsumeInput(connection) == 1 else { throw .closed(errorMessage) }
            }
            guard let result = PQgetResult(connection) else { break }
            defer { PQclear(result) }
            switch PQresultStatus(result) {
            case PGRES_TUPLES_OK:
                rows = PostgresRow.rows(of: result)
            case PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
                rows = []
            case PGRES_FATAL_ERROR, PGRES_NONFATAL_ERROR:
                failure = failure ?? Self.failure(of: result)
            default:
                failure = failure ?? .unexpected(String(cString: PQresStatus(PQresultStatus(result))))
            }
        }
        if let failure {
            // An error without a SQLSTATE is libpq's own: the connection failed under the statement.
            if case .server(nil, let message) = failure, isClosed { throw .closed(message) }
            throw failure
        }
        return rows
    }

    private func timedOut() -> Failure {
        close()
        return .timedOut
    }

    private static func failure(of result: OpaquePointer) -> Failure {
        func field(_ code: Character) -> String? {
            guard let value = PQresultErrorField(result, Int32(code.asciiValue ?? 0)) else { return nil }
            return String(cString: value)
        }
        let message = field("M") ?? String(cString: PQresultErrorMessage(result)).trimmingWhitespace
        let detail = field("D")
        return .server(sqlState: field("C"), message: detail.map { "\(message): \($0)" } ?? message)
    }

    /// libpq's last error message on this connection, one line.
    private var errorMessage: String {
        guard let connection else { return "the connection to the store was closed" }
        let message = String(cString: PQerrorMessage(connection)).trimmingWhitespace
        return message.isEmpty ? "the connection to the store ended" : message
    }

    /// Waits until the socket is ready for `events`, or `deadline` passes (false).
    private func wait(for events: Int16, until deadline: ContinuousClock.Instant) -> Bool {
        guard let connection else { return false }
        var descriptor = pollfd(fd: PQsocket(connection), events: events, revents: 0)
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            let ready = poll(&descriptor, 1, Int32(clamping: max(1, left.inMilliseconds)))
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { return true }  // libpq's next call says what is wrong.
        }
    }
}

/// The server's notices: a warning (a synchronous standby that did not confirm a commit, a lock
/// released that was not held) at warning level, the rest ("already exists, skipping") at debug.
private final class NoticeSink: Sendable {
    let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    func receive(_ result: OpaquePointer) {
        func field(_ code: Character) -> String {
            PQresultErrorField(result, Int32(code.asciiValue ?? 0)).map { String(cString: $0) } ?? ""
        }
        // "V": the severity, never translated.
        let severity = field("V")
        let metadata: Logger.Metadata = ["store.notice": "\(field("M"))", "store.severity": "\(severity)"]
        if severity == "WARNING" {
            logger.warning("the store warns", metadata: metadata)
        } else {
            logger.debug("the store notes", metadata: metadata)
        }
    }
}

extension String {
    /// One line, without the spaces and line ends libpq puts around and inside its messages.
    fileprivate var trimmingWhitespace: String {
        split(whereSeparator: \.isNewline).map { $0.trimmingPrefix(while: \.isWhitespace) }
            .filter { !$0.isEmpty }.joined(separator: " ")
    }
}

/// Calls `body` with `strings` as a NULL-terminated array of C strings that live through the call.
private func withCStrings<T>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> T) -> T {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    let pointers = copies.map { $0.map { UnsafePointer($0) } } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
}
