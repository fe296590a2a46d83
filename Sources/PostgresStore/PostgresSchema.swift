/// The tables of a Bureau store in PostgreSQL, created on first use and checked on every open.
///
/// - `bureau_store`: one row, the schema version.
/// - `bureau_events`: one row per event. The position is the primary key (catch-up reads are
///   range scans of it); the id is unique for ever, so a retried publish is recognised however
///   old it is; type, commit time, causation and correlation are taken from the stored
///   envelope for SQL readers and indexes; `body` is the envelope exactly as the bus stored it.
/// - `bureau_snapshots`: a reducer's latest snapshot per module, so that a reducer can resume
///   on any host.
enum PostgresSchema {
    /// The version this code writes and reads.
    static let version = 1

    /// Held (transaction-scoped) while the tables are created, so that two first opens do not race.
    static let setupLockKey: Int64 = 0x6275_7265_6175_0000
    /// Held (session-scoped) by the one daemon that writes.
    static let writerLockKey: Int64 = 0x6275_7265_6175_0001

    static let statements: [PostgresQuery] = [
        """
        CREATE TABLE IF NOT EXISTS bureau_store (
            singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
            schema_version integer NOT NULL)
        """,
        """
        CREATE TABLE IF NOT EXISTS bureau_events (
            position bigint PRIMARY KEY CHECK (position > 0),
            id uuid NOT NULL UNIQUE,
            type text,
            committed_at timestamptz,
            causation bigint,
            correlation uuid,
            body bytea NOT NULL)
        """,
        "CREATE INDEX IF NOT EXISTS bureau_events_by_type ON bureau_events (type text_pattern_ops, position)",
        """
        CREATE TABLE IF NOT EXISTS bureau_snapshots (
            module text PRIMARY KEY,
            position bigint NOT NULL,
            written_at timestamptz NOT NULL DEFAULT now(),
            state bytea NOT NULL)
        """,
        "INSERT INTO bureau_store (schema_version) VALUES (1) ON CONFLICT (singleton) DO NOTHING",
    ]

    /// Creates what is missing and checks the version; throws if the database holds a newer schema.
    static func prepare(_ session: PostgresSession) throws {
        try session.query("BEGIN", what: "preparing the store")
        do {
            try session.query("SELECT pg_advisory_xact_lock(\(setupLockKey))", what: "locking the store's setup")
            let existing = try session.query(
                "SELECT to_regclass('bureau_store') IS NOT NULL", what: "looking for the store's tables")
            if try existing.first?.bool(0) == true {
                try check(session)
            }
            for statement in statements {
                try session.query(statement, what: "creating the store's tables")
            }
            try check(session)
            try session.query("COMMIT", what: "preparing the store")
        } catch {
            do {
                try session.query("ROLLBACK", what: "abandoning the store's setup")
            } catch {
                // A transaction that could not be ended would fail every later statement of this
                // session ("current transaction is aborted"), hiding why: closed, so that the next
                // use connects again. What failed first is what is thrown.
                session.close()
            }
            throw error
        }
    }

    private static func check(_ session: PostgresSession) throws {
        let rows = try session.query("SELECT schema_version FROM bureau_store", what: "reading the schema version")
        // No row yet: a setup that was interrupted before its insert (it is in the same transaction, so rare).
        guard let row = rows.first else { return }
        let found: Int
        do {
            found = Int(try row.integer(0))
        } catch {
            throw PostgresStoreError.foreignSchema("bureau_store.schema_version is not an integer")
        }
        guard found <= version else { throw PostgresStoreError.newerSchema(found: found, known: version) }
    }
}
