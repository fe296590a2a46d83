import BusTesting
import Foundation
import Guards
import TestServers
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Hosts left behind by a run that died: its bridge also says it is 198.51.100.254 and would
/// take this run's traffic. Real namespaces and bridges; skipped, saying why, where they cannot
/// be made.
@Suite(.serialized, .requiresNetworkHosts)
struct NetworkHostsTests {
    static let ip = "/usr/sbin/ip"

    static func links() throws -> String { try SystemCommand.run([ip, "-o", "link", "show"]) }
    static func namespaces() throws -> String { try SystemCommand.run([ip, "netns", "list"]) }

    @Test func makingHostsRemovesWhatAnEndedProcessLeftAndNothingOfARunningOne() async throws {
        // The id of a process that has ended: one this test started and waited for.
        let directory = try TemporaryDirectory("hosts")
        let ended = try ChildProcess("/bin/true", [], directory: directory.path, name: "true")
        #expect(await ended.exitCode() == 0)
        let stale = NetworkHosts.Tag(process: ended.pid, serial: 0x5a)
        try #require(stale.isLeftOver, "process \(ended.pid) still exists")
        let running = NetworkHosts.Tag(process: getpid(), serial: 0xa5)
        #expect(!running.isLeftOver)
        let made = ["bb\(stale.text)", "bx\(stale.text)0", "bb\(running.text)"]
        // Every `ip` waited for on a thread of its own, not on the cooperative pool.
        let (links, namespaces, namespace) = try await OwnThread.run(name: "test-netns") {
            () throws -> (String, String, String) in
            for name in made { try SystemCommand.run([Self.ip, "link", "add", name, "type", "bridge"]) }
            try SystemCommand.run([Self.ip, "netns", "add", "bureau-\(stale.text)-bus"])
            defer {
                for name in made { _ = try? SystemCommand.run([Self.ip, "link", "del", name]) }
                _ = try? SystemCommand.run([Self.ip, "netns", "del", "bureau-\(stale.text)-bus"])
            }
            // Subnet 3: HostsTests and HostsPartitionTests take 0 and 1.
            let network = try NetworkHosts(["bus"], subnet: 3)
            defer { network.remove() }
            return (try Self.links(), try Self.namespaces(), try network.host("bus").namespace)
        }

        #expect(!links.contains("bb\(stale.text):"), "the ended process's bridge is still there")
        #expect(!links.contains("bx\(stale.text)0:"), "the ended process's impairment bridge is still there")
        #expect(links.contains("bb\(running.text):"), "a running process's bridge was deleted")
        #expect(!namespaces.contains("bureau-\(stale.text)-bus"))
        // The new hosts carry this process's id.
        #expect(namespace.hasPrefix("bureau-\(String(format: "%06x", getpid()))"))
    }
}
