import ArgumentParser
import Foundation
import PostgresStore

/// `--store URL`: the log in a PostgreSQL database instead of the data directory's files.
struct StoreOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "A PostgreSQL store, instead of the data directory: the bus keeps its log there, the log tools read "
                + "it there, reducer hosts keep their snapshots there. "
                + "postgres://USER[:PASSWORD]@HOST[:PORT][,HOST[:PORT]…]/DATABASE; several hosts are a "
                + "primary and its standbys, the writable one is used. The password may come from PGPASSWORD. "
                + "(env: BUREAU_STORE)",
            valueName: "url"))
    var store: String?

    /// How long a tool reading the store keeps trying, once connected, a store that cannot be
    /// reached (a standby being promoted) before it gives up.
    static let readerReconnectWait: Duration = .seconds(30)

    /// The store's URL, or nil for the files.
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
