import ArgumentParser
import BureauSchemas
import Bus
import EventLog
import Foundation
import LogTools

struct LogStats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Count the log's events: in all, per type, first and last position and time, bytes."
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var connection: BusConnectionOptions
    @OptionGroup var store: StoreOptions
    @Flag(help: "Print the statistics as JSON.") var json = false

    func run() async throws {
        var count: UInt64 = 0
        var first: StoredEvent?
        var last: StoredEvent?
        var perType: [String: UInt64] = [:]
        let progress = Progress(label: "reading the log")
        var envelopeBytes: Int64 = 0
        let source = try LogSource.resolve(global, connection, store, process: "log-stats")
        defer { source.close() }
        try await source.scan { event, envelope in
            count += 1
            envelopeBytes += Int64(envelope.count)
            if first == nil { first = event }
            last = event
            perType[event.type, default: 0] += 1
            progress.update(event.position)
            return true
        }
        progress.finish()
        // Through a bus there are no files to measure: the envelopes' bytes stand in.
        let bytes: Int64
        if case .files(let location) = source.kind {
            bytes = try LogFootprint.measure(directory: location.logDirectory).bytes
        } else {
            bytes = envelopeBytes
        }
        // Types no schema of this build defines: events of a later build, passed over by every host.
        let unknown = perType.filter { SchemaRegistry.messageType(named: $0.key) == nil }
        if json {
            let types = perType.sorted { $0.key < $1.key }.map { "\(JSONText.quoted($0.key)):\($0.value)" }
            let unknownTypes = unknown.keys.sorted().map(JSONText.quoted)
            print(
                "{\"count\":\(count),\"first\":\(first?.position ?? 0),\"last\":\(last?.position ?? 0),"
                    + "\"firstTime\":\(first.map { "\"\($0.commitTime)\"" } ?? "null"),"
                    + "\"lastTime\":\(last.map { "\"\($0.commitTime)\"" } ?? "null"),"
                    + "\"bytes\":\(bytes),\"types\":{\(types.joined(separator: ","))},"
                    + "\"unknownTypes\":[\(unknownTypes.joined(separator: ","))]}")
            return
        }
        print("events     \(count)")
        if let first, let last {
            print("first      \(first.position)  \(first.commitTime)")
            print("last       \(last.position)  \(last.commitTime)")
        }
        print("bytes      \(bytes)" + (source.isFiles ? "" : " (of envelopes, read through \(source.name))"))
        guard !perType.isEmpty else { return }
        print("per type")
        let width = perType.keys.map(\.count).max() ?? 0
        for (type, number) in perType.sorted(by: { ($0.value, $1.key) > ($1.value, $0.key) }) {
            print(
                "  " + type.padding(toLength: width, withPad: " ", startingAt: 0) + "  \(number)"
                    + (unknown[type] == nil ? "" : "  (unknown to this build: passed over)"))
        }
        if !unknown.isEmpty {
            print(
                "unknown    \(unknown.values.reduce(0, +)) event(s) of \(unknown.count) type(s) this build does not "
                    + "know: every host passes over them")
        }
    }
}
