/// What went wrong with a PostgreSQL store, said so that a person can act on it.
public enum PostgresStoreError: Error, Equatable, CustomStringConvertible {
    /// The store URL could not be parsed; the URL is shown without its password.
    case badURL(String, reason: String)
    /// No host of the URL could be reached, or none accepted writes, within the attempts made.
    case unreachable(String, reason: String)
    /// The server refused the user, the password or the database.
    case refused(String, reason: String)
    /// TLS was asked for and failed: the server offers none, its certificate is not trusted or
    /// does not name the host, or the CA file cannot be read. Not retried: trying again changes nothing.
    case tls(String, reason: String)
    /// The database holds a schema newer than this version of Bureau knows.
    case newerSchema(found: Int, known: Int)
    /// The database holds tables named like Bureau's that are not a Bureau store.
    case foreignSchema(String)
    /// Another process holds the store's writer lock.
    case writerLockHeld(String)
    /// A standby was asked to stop before the writer lock came free.
    case stoppedWaiting
    /// A statement failed; the server's SQLSTATE and message, if any.
    case statement(String, sqlState: String?, message: String)

    public var description: String {
        switch self {
        case .badURL(let url, let reason):
            return "bad store URL \(url): \(reason)"
        case .unreachable(let url, let reason):
            return "cannot reach the store \(url): \(reason)"
        case .refused(let url, let reason):
            return "the store \(url) refused the connection: \(reason)"
        case .tls(let url, let reason):
            return "no TLS connection to the store \(url): \(reason)"
        case .newerSchema(let found, let known):
            return
                "the store's schema is version \(found), newer than this bureau knows (\(known)): "
                + "run a newer bureau, or use another database"
        case .foreignSchema(let reason):
            return "the database is not a Bureau store: \(reason)"
        case .writerLockHeld(let url):
            return
                "another bus daemon writes to the store \(url); stop it, or start this one with --standby "
                + "to take over when it ends"
        case .stoppedWaiting:
            return "stopped while waiting as a standby for the store's writer lock"
        case .statement(let what, let sqlState, let message):
            return "\(what) failed: \(message)" + (sqlState.map { " (SQLSTATE \($0))" } ?? "")
        }
    }

    /// What a failed connection's message says the server refused (the user, the password, the
    /// database, this client's address), or that it asked for a password none was given for;
    /// nil for any other failure. libpq keeps no SQLSTATE for a failed connection, so this reads
    /// the server's message: in a language other than English it is not recognised, and the
    /// refusal is then retried like a server that is away until the caller's wait ends, and
    /// reported with the server's words.
    static func refusal(in message: String) -> String? {
        if message.contains("no password supplied") {
            return "the server asks for a password: put it in the URL or in PGPASSWORD"
        }
        let refusals = [
            "password authentication failed", "authentication failed for user", "no pg_hba.conf entry",
            "is not permitted to log in",
        ]
        // No such database or role; not libpq's own "root certificate file … does not exist".
        let noSuch = message.contains("FATAL:") && message.contains("does not exist")
        guard noSuch || refusals.contains(where: message.contains) else { return nil }
        return message
    }
}
