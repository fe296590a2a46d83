import Bus
import Testing

@testable import ZeroMQBus

/// `--bus tcp://HOST:PORT`: the three endpoints the daemon's `--listen HOST:PORT` binds, or an
/// error naming what is wrong with the address.
struct RemoteBusTests {
    @Test func anAddressNamesTheDaemonsThreePorts() throws {
        let remote = try RemoteBus(url: "tcp://198.51.100.1:7400", curve: nil)
        #expect(
            remote.endpoints
                == BusEndpoints(
                    ingress: "tcp://198.51.100.1:7400", read: "tcp://198.51.100.1:7401",
                    events: "tcp://198.51.100.1:7402"))
        let v6 = try RemoteBus(url: "tcp://[::1]:7400", curve: nil)
        #expect(v6.endpoints.events == "tcp://[::1]:7402")
    }

    @Test func severalAddressesAreAnActiveDaemonAndItsStandbysWhichTheClientJoinsAll() throws {
        let remote = try RemoteBus(url: "tcp://198.51.100.1:7400,tcp://198.51.100.2:7500", curve: nil)
        #expect(remote.endpoints.ingress == "tcp://198.51.100.1:7400")
        #expect(remote.endpoints.all.map(\.ingress) == ["tcp://198.51.100.1:7400", "tcp://198.51.100.2:7500"])
        #expect(remote.endpoints.all.map(\.events) == ["tcp://198.51.100.1:7402", "tcp://198.51.100.2:7502"])
    }

    @Test(arguments: [
        ("198.51.100.1:7400", "--bus takes tcp://HOST:PORT"),
        ("ipc:///tmp/x", "--bus takes tcp://HOST:PORT"),
        ("tcp://198.51.100.1", "give a host and a port"),
        ("tcp://:7400", "give a host and a port"),
        ("tcp://host/path:7400", "give a host and a port"),
        ("tcp://198.51.100.1:65534", "the port '65534' is out of range"),
        ("tcp://198.51.100.1:-1", "the port '-1'"),
        ("tcp://198.51.100.1:http", "the port 'http' is not a whole number"),
        ("tcp://198.51.100.1:7400,", "--bus takes tcp://HOST:PORT"),
        ("tcp://198.51.100.1:7400,tcp://198.51.100.2", "--bus tcp://198.51.100.2: give a host and a port"),
    ])
    func aWrongAddressIsNamed(url: String, says: String) {
        #expect {
            try RemoteBus(url: url, curve: nil)
        } throws: { error in
            "\(error)".contains(says)
        }
    }
}
