import BusScenarios
import BusTesting
import TestServers

/// The kit's temporary directory, under the name the tests have always used.
public typealias TemporaryDirectory = BusScenarios.TemporaryDirectory
/// Ports for tests' TCP listeners, which TestServers' servers take too.
public typealias TCPPorts = TestServers.TCPPorts

/// Something a test helper could not do.
public struct TestSupportError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
