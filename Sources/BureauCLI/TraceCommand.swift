import ArgumentParser
import Bus
import EventLog
import Foundation
import Guards
import LogTools

/// `bureau trace ID`: the causation tree of one user action, from the log alone.
struct TraceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace",
        abstract: "Print the causation tree of one action, from the log alone.",
        discussion: HelpText.prose(
            """
            ID is an event id or a correlation id (8-4-4-4-12 hex digits), or a trace id as a \
            tracing backend shows it (32 hex digits: the same id, since a trace's id is its \
            chain's correlation). Given an event in the middle of a chain, the whole chain is \
            shown and that event is pointed at (◀).

            Each line is one event, under the event that caused it: its position, type, the \
            process (and module) that published it, and the time from its cause's commit to \
            its own (a root's: from the first event's). It reads the log only, so it works \
            offline, on a copy of a data directory, through --bus on another machine, and on \
            PostgreSQL with --store. An id found nowhere, or a log that cannot be read to its \
            end, is an error (exit 1).

            Examples:
              bureau trace 5f0c2a4e-8d1b-4c7e-9a3f-2b6d8e1f0a47
              bureau trace 5f0c2a4e8d1b4c7e9a3f2b6d8e1f0a47 --store postgres://bureau@db/bureau
            """)
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var connection: BusConnectionOptions
    @OptionGroup var store: StoreOptions
    @Argument(help: ArgumentHelp("An event id or a correlation id.", valueName: "id"))
    var id: String

    func validate() throws {
        guard Self.parse(id) != nil else {
            throw ValidationError(
                "'\(id)' is not an event id: give 8-4-4-4-12 hex digits (an event or correlation id) or 32 (a trace id)"
            )
        }
    }

    /// An event id as `bureau` prints it, or a trace id as tracing backends do (32 hex digits).
    static func parse(_ text: String) -> EventID? {
        if let id = EventID(text) { return id }
        guard text.count == 32, let parent = TraceParent(header: "00-\(text)-0000000000000001-01") else { return nil }
        return parent.traceID
    }

    func run() async throws {
        guard let asked = Self.parse(id) else { throw ValidationError("'\(id)' is not an event id") }
        let source = try LogSource.resolve(global, connection, store, process: "trace")
        defer { source.close() }
        var (tree, read) = try await Self.chain(of: asked, in: source)
        // An event in the middle of a chain: its whole chain, found by its correlation.
        if let found = tree.hops.first(where: { $0.event.id == asked }), found.event.correlation != .zero,
            found.event.correlation != asked
        {
            (tree, read) = try await Self.chain(of: found.event.correlation, in: source)
        }
        guard !tree.isEmpty else {
            throw CLIError(
                "no event in \(source.name) has the id or the correlation \(asked) (\(read) events read)")
        }
        let root = tree.hops.first?.event.correlation ?? asked
        let correlation = root == .zero ? tree.hops[0].event.id : root
        print(
            "trace \(correlation) (trace id \(TraceParent(traceID: correlation, spanID: 1).traceHex)): "
                + "\(tree.hops.count) event\(tree.hops.count == 1 ? "" : "s"), "
                + "\(tree.processes.count) process\(tree.processes.count == 1 ? "" : "es"), "
                + "\(CausationTree.elapsed(tree.duration).dropFirst()) from the first commit to the last")
        for line in tree.lines(marking: asked == correlation ? nil : asked) { print(line) }
    }

    /// The events `intent` caused, read from the whole log; a log that cannot be read to its end
    /// is an error, since what was not read may belong to the chain.
    static func chain(of intent: EventID, in source: LogSource) async throws -> (CausationTree, read: Int) {
        var chain = CorrelationChain(intent)
        var tree = CausationTree()
        var read = 0
        do {
            try await source.forEach { event in
                read += 1
                if chain.depth(of: event) != nil { tree.add(event) }
            }
        } catch {
            throw CLIError(
                "cannot read the whole log in \(source.name) (\(read) events read): \(error)\n"
                    + "The trace may be incomplete; `bureau log verify` lists the damage.")
        }
        return (tree, read)
    }
}
