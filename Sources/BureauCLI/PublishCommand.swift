import ArgumentParser
import BureauSchemas
import Bus
import EventLog
import Foundation
import Guards
import SwiftProtobuf

struct PublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish one event from a shell and print its position.",
        discussion: HelpText.prose(
            """
            The payload is given in protobuf's JSON mapping, e.g.
              bureau publish --type bureau.watchlist.PairAddRequested --json '{"base":"EUR","quote":"USD"}'
            `bureau publish --list-types` prints every type this build knows.
            """)
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var connection: BusConnectionOptions
    @Option(help: ArgumentHelp("The event's full type name.", valueName: "type")) var type: String?
    @Option(help: ArgumentHelp("The payload as JSON.", valueName: "json")) var json: String = "{}"
    @Option(help: ArgumentHelp("The event id (default: a new random one).", valueName: "uuid")) var id: String?
    @Option(help: ArgumentHelp("The correlation id (default: the event's own id).", valueName: "uuid"))
    var correlation: String?
    @Option(help: "The position of the event that caused this one.") var causation: UInt64 = 0
    @Option(
        help: "Seconds to wait for the bus's acknowledgement, 0.001 to 3600. (default: 10)",
        transform: BoundedNumber.decimals(in: 0.001...3600))
    var timeout: Double = 10
    @Flag(help: "List the event types and exit.") var listTypes = false

    func run() async throws {
        if listTypes {
            for name in SchemaRegistry.eventTypeNames { print(name) }
            return
        }
        guard let type else { throw CLIError("give --type (see --list-types)") }
        guard let messageType = SchemaRegistry.messageType(named: type) else {
            let short = TypeName.shortName(of: type).lowercased()
            let close = SchemaRegistry.eventTypeNames.filter {
                short.count >= 3 && $0.lowercased().contains(short)
            }
            throw CLIError(
                "unknown type '\(type)'"
                    + (close.isEmpty ? "; see --list-types" : "; did you mean \(close.joined(separator: ", "))?"))
        }
        let message: any SwiftProtobuf.Message
        do {
            message = try messageType.init(jsonString: json)
        } catch {
            throw CLIError("--json is not a valid \(type): \(error)")
        }
        let eventID =
            try id.map { text in
                guard let parsed = EventID(text) else { throw CLIError("--id '\(text)' is not a UUID") }
                return parsed
            } ?? EventID.random()
        let correlationID = try correlation.map { text in
            guard let parsed = EventID(text) else { throw CLIError("--correlation '\(text)' is not a UUID") }
            return parsed
        }
        let event = OutgoingEvent(
            id: eventID, type: type, payload: try message.serializedData(), causation: causation,
            correlation: correlationID)
        let client = try connection.client(
            process: "publish", publishTimeout: BoundedNumber.duration(seconds: timeout), global: global,
            upcasting: .none)
        defer { client.close() }
        switch try await client.publish(event) {
        case .committed(let position):
            print(position)
        case .duplicate(let position):
            print("\(position) (already committed: an event with id \(eventID) is there)")
        case .rejected(let reason):
            throw CLIError("the bus rejected the event: \(reason)")
        }
    }
}
