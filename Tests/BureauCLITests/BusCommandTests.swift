import Testing

@testable import BureauCLI

/// `--insecure` warns at every start, and loudly when the address is not loopback.
struct InsecureWarningTests {
    @Test(arguments: ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]", "::ffff:127.0.0.1"])
    func aLoopbackAddressGetsAWarning(host: String) {
        #expect(BusCommand.isLoopback(host))
        let warning = BusCommand.insecureWarning(host: host, port: 7100)
        #expect(
            !warning.loud && warning.text.hasPrefix("--insecure: the bus listens on \(host):7100-7102 over plain TCP"))
    }

    @Test(arguments: ["0.0.0.0", "*", "::", "10.0.0.5", "192.168.1.2", "bus.example.com", "eth0", "128.0.0.1"])
    func anyOtherAddressGetsABannerNobodyCanMiss(host: String) {
        #expect(!BusCommand.isLoopback(host))
        let warning = BusCommand.insecureWarning(host: host, port: 7100)
        #expect(warning.loud && warning.text.hasPrefix("!!! INSECURE: the bus listens on \(host):7100-7102"))
    }
}
