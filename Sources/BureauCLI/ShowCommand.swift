import ArgumentParser
import Bus
import EventLog
import Foundation
import Guards
import LogTools
import Runtime

struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print a read model (projection) as of now or as of a position.",
        discussion:
            "Read models: \(Composition.registry().projections.map(\.name).joined(separator: ", ")). Reads the log files, a remote bus (--bus) or a store (--store). "
            + "An event of the read model's types that cannot be read (its payload does not decode, or its upcaster "
            + "failed) is passed over and named on stderr after the model, with how many there were."
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var connection: BusConnectionOptions
    @OptionGroup var store: StoreOptions
    @Argument(help: "The read model, e.g. watchlist.") var name: String
    @Option(help: "Fold the log up to this position (default: all of it).") var at: UInt64?
    @Flag(help: "Print it as JSON.") var json = false

    func validate() throws {
        let names = Composition.registry().projections.map(\.name)
        guard names.contains(name) else {
            throw ValidationError("unknown read model '\(name)'; there are: \(names.joined(separator: ", "))")
        }
    }

    func run() async throws {
        guard let projection = Composition.registry().projections.first(where: { $0.name == name }) else { return }
        let fold = projection.fold()
        let progress = Progress(label: "folding")
        let source = try LogSource.resolve(global, connection, store, process: "show")
        defer { source.close() }
        try await source.forEach(to: at) { event in
            fold.apply(event)
            progress.update(event.position)
        }
        progress.finish()
        print(json ? try fold.json() : fold.render())
        // Not a failure (every event was read, as log show reads them), but the read model lacks
        // what these held: said on stderr, naming them, after the model.
        if !fold.passedOver.isEmpty { printWarning("\(name): \(fold.passedOver)") }
    }
}
