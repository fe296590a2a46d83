import ArgumentParser
import Bus
import Foundation
import Guards
import Supervisor
import YAMLFile
import ZeroMQ
import ZeroMQBus

/// Where a command that talks to a bus finds it: the data directory's bus (the default), or
/// a bus on another machine over TCP, with CURVE keys.
struct BusConnectionOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "A bus on another machine: tcp://HOST:PORT, the address its daemon was given with --listen "
                + "(several, separated by commas, for an active daemon and its standbys on a shared store), or a "
                + "file that says where it is and which keys to use (a connection file, or a deployment file with "
                + "a bus: section) (default: $BUREAU_BUS, else the data directory's bus).",
            valueName: "url"))
    var bus: String?

    @Option(
        help: ArgumentHelp(
            "The daemon's CURVE public key file, its .pub from `bureau keygen` (default: $BUREAU_SERVER_KEY).",
            valueName: "file"))
    var serverKey: String?

    @Option(
        help: ArgumentHelp(
            "This client's CURVE secret key file, its .key from `bureau keygen`; the daemon's --allow-keys "
                + "must list its .pub (default: $BUREAU_CLIENT_KEY).",
            valueName: "file"))
    var clientKey: String?

    static let busVariable = "BUREAU_BUS"
    static let serverKeyVariable = "BUREAU_SERVER_KEY"
    static let clientKeyVariable = "BUREAU_CLIENT_KEY"

    func validate() throws {
        if bus == nil && Self.variable(Self.busVariable) == nil && (serverKey != nil || clientKey != nil) {
            throw ValidationError("--server-key and --client-key apply only to a bus given with --bus tcp://HOST:PORT")
        }
    }

    /// The bus on another machine these options (or the environment) name; nil for the data
    /// directory's. Reads the key files, so a wrong one is refused before anything connects.
    func remote(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> RemoteBus? {
        func value(_ option: String?, _ variable: String) -> String? {
            option ?? environment[variable].flatMap { $0.isEmpty ? nil : $0 }
        }
        guard let url = value(bus, Self.busVariable) else { return nil }
        if !url.hasPrefix("tcp://"), !FilePresence.isMissing(url) {
            // A connection file: its keys unless the options name others.
            let file: Deployment.RemoteBus
            do {
                file = try ConnectionFile.parse(try YAMLReader.text(ofFile: url), file: url)
            } catch {
                throw CLIError("\(error)")
            }
            return try RemoteBus(
                url: file.url, serverKeyFile: serverKey ?? file.serverKeyFile,
                clientKeyFile: clientKey ?? file.clientKeyFile)
        }
        return try RemoteBus(
            url: url, serverKeyFile: value(serverKey, Self.serverKeyVariable),
            clientKeyFile: value(clientKey, Self.clientKeyVariable))
    }

    /// A client of the bus these options name, or of the data directory's bus, whose
    /// subscriptions read events through `upcasting` (the build's, ``Composition/upcasting()``;
    /// `.none` for a tool that wants them as stored).
    func client(
        process: String, publishTimeout: Duration = .seconds(10), global: GlobalOptions,
        upcasting: EventUpcasting
    ) throws -> ZeroMQBusClient {
        var options = ZeroMQBusClient.Options(process: process)
        options.publishTimeout = publishTimeout
        options.upcasting = upcasting
        let logger = global.logger("bureau.client")
        if let remote = try remote() {
            return try ZeroMQBusClient(remote: remote, options: options, logger: logger)
        }
        return try ZeroMQBusClient(location: global.location, options: options, logger: logger)
    }

    private static func variable(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }
}
