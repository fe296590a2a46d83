import Bus
import Guards
import ZeroMQ

/// A bus on another machine, as a client reaches it: `tcp://HOST:PORT` and, for CURVE, the
/// daemon's public key and this client's key pair.
///
/// The address is the one `bureau bus --listen HOST:PORT` was given: PORT takes publishes,
/// PORT+1 reads and PORT+2 publishes events. Several, separated by commas, name an active
/// daemon and its standbys (sharing one key pair); the client follows whichever serves.
public struct RemoteBus: Sendable {
    /// The address as the user gave it, for messages.
    public let url: String
    public let endpoints: BusEndpoints
    /// Nil for plain TCP (a bus started with `--insecure`).
    public let curve: ZeroMQBusClient.Options.Curve?

    /// Reads `url`, one address or several separated by commas (daemons of one bus, a standby
    /// among them: the client connects to all); throws ``BusError/unusableLocation(_:)``
    /// naming what is wrong.
    public init(url: String, curve: ZeroMQBusClient.Options.Curve?) throws {
        let addresses = url.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard addresses.count <= 8 else {
            throw BusError.unusableLocation("--bus names \(addresses.count) daemons; at most 8")
        }
        let parsed = try addresses.map { try Self.endpoints($0, serverKey: curve?.serverKey) }
        var endpoints = parsed[0]
        if parsed.count > 1 { endpoints.alternates = Array(parsed.dropFirst()) }
        self.url = url
        self.curve = curve
        self.endpoints = endpoints
    }

    /// The three endpoints of one `tcp://HOST:PORT`.
    private static func endpoints(_ url: String, serverKey: String?) throws -> BusEndpoints {
        let scheme = "tcp://"
        guard url.hasPrefix(scheme) else {
            throw BusError.unusableLocation(
                "--bus takes tcp://HOST:PORT (the daemon's --listen address), not '\(url)'")
        }
        let address = url.dropFirst(scheme.count)
        // The port follows the last colon, so a bracketed IPv6 host keeps its own.
        guard let colon = address.lastIndex(of: ":"), colon != address.startIndex,
            !address[..<colon].contains("/"), !address[..<colon].contains(" ")
        else {
            throw BusError.unusableLocation("--bus \(url): give a host and a port, as in tcp://198.51.100.1:7400")
        }
        let host = String(address[..<colon])
        let port: Int
        do {
            // PORT+1 and PORT+2 must be ports too.
            port = try BoundedNumber.integer(String(address[address.index(after: colon)...]), in: 1...65533)
        } catch {
            throw BusError.unusableLocation("--bus \(url): the port \(error)")
        }
        return BusEndpoints(
            ingress: "tcp://\(host):\(port)", read: "tcp://\(host):\(port + 1)", events: "tcp://\(host):\(port + 2)",
            serverKey: serverKey)
    }

    /// Reads `url` and the key files: both for CURVE, neither for plain TCP (a bus started with
    /// `--insecure`; against a CURVE bus the client says so). `serverKeyOption` and
    /// `clientKeyOption` name where the paths came from, for errors (`--server-key`,
    /// `bus.server_key`).
    public init(
        url: String, serverKeyFile: String?, clientKeyFile: String?, serverKeyOption: String = "--server-key",
        clientKeyOption: String = "--client-key"
    ) throws {
        switch (serverKeyFile, clientKeyFile) {
        case (nil, nil):
            try self.init(url: url, curve: nil)
        case (let server?, let client?):
            let serverPublicKey = try KeyFiles.readPublicKey(server, option: serverKeyOption)
            let keys = try CurveKeyPair(secretKey: try KeyFiles.readSecretKey(client, option: clientKeyOption))
            try self.init(url: url, curve: .init(serverKey: serverPublicKey, keys: keys))
        case (nil, _?):
            throw KeyFileError(
                "\(url) with \(clientKeyOption) needs \(serverKeyOption) too: the daemon's public key file (its .pub)")
        case (_?, nil):
            throw KeyFileError(
                "\(url) with \(serverKeyOption) needs \(clientKeyOption) too: this client's secret key file "
                    + "(NAME.key from `bureau keygen`, whose .pub the daemon's --allow-keys lists)")
        }
    }
}
