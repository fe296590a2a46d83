import ArgumentParser
import Foundation
import PostgresStore

/// `--store URL`: the log in a PostgreSQL database instead of the data directory's files.
struct StoreOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "A PostgreSQL store, instead of the data directory: the bus keeps its log there, the log tools read "
                + "it there, reducer hosts keep their snapshots there. "
                + "postgres://USER[:PASSWORD]@HOST[:PORT][,HOST[:PORT]…]/DATABASE[?OPTION=VALUE&…]; several hosts "
                + "are a primary and its standbys, the writable one is used. The password may come from PGPASSWORD. "
                + "Options: sslmode=disable (the default: plain TCP), require (encrypted), verify-ca (and the "
                + "server's certificate signed by a trusted CA) or verify-full (and naming the host); "
                + "sslrootcert=FILE, the CA certificates (PEM) to trust instead of the system's; "
                + "connect_timeout=SECONDS (5); query_timeout=SECONDS (30). "
                + "(env: BUREAU_STORE)",
            valueName: "url"))
    var store: String?

    /// A URL that does not parse (or whose CA file cannot be read) is a usage error of every
    /// command that takes one, said before the command starts anything.
    func validate() throws {
        _ = try url()
    }

    /// How long a tool reading the store keeps trying, once connected, a store that cannot be
    /// reached (a standby being promoted) before it gives up.
    static let readerReconnectWait: Duration = .seconds(30)

    /// The store's URL, or nil for the files. Every command that takes `--store` reads it here.
    func url() throws -> PostgresStoreURL? {
        let environment = ProcessInfo.processInfo.environment
        guard let text = store ?? environment["BUREAU_STORE"], !text.isEmpty else { return nil }
        do {
            return try PostgresStoreURL(parsing: text, environment: environment)
        } catch {
            throw ValidationError("--store: \(error)")
        }
    }
}
