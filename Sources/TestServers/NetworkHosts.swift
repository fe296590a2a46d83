import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Hosts for tests and benchmarks: one network namespace per host, each joined by a veth pair to a bridge in
/// this namespace, with addresses from the documentation range 198.51.100.0/24: one of its four
/// /26 subnets per set of hosts (``subnet``), so that up to four sets live side by side in one
/// process. In subnet 0 the hosts are .1, .2, … and the bridge, which is where the test process
/// itself stands, is .62; in subnet 3 they are .193, .194, … and the bridge .254.
///
/// Needs root and `ip` (iproute2); ``unavailable`` says why not otherwise, so that a test can
/// be skipped saying so. ``remove()`` (or releasing it) deletes everything it made.
///
/// Every name it makes carries its process's id (``Tag``): a process that died without
/// removing its hosts (a crashed test run) left a bridge that also has its subnet's address and would
/// take the next run's traffic, so making hosts first deletes the bridges and namespaces of
/// processes that are gone (``removeLeftovers()``), and nothing of a process still running.
public final class NetworkHosts: @unchecked Sendable {
    public struct Host: Sendable {
        public let name: String
        /// The namespace's name.
        public let namespace: String
        public let address: String
        /// The veth end on the bridge's side: taking it down partitions the host.
        let bridgeSide: String
    }

    public private(set) var hosts: [Host] = []
    private var netemHosts: Set<String> = []
    private var links: [String: (link: ImpairedLink, bridge: String)] = [:]
    /// Which /26 of 198.51.100.0/24 the hosts have (0 to 3).
    public let subnet: Int
    public let bridgeAddress: String
    private let bridge: String
    private let tag: String

    /// The subnets taken by this process's hosts: two sets in one subnet would give the bridges
    /// one address and the routes one destination.
    private static let subnetsInUse = Mutex<Set<Int>>([])
    /// Each set's serial in its tag: names this process makes never repeat.
    private static let serials = Atomic<UInt8>(0)

    /// Why hosts cannot be made here, or nil if they can (checked once, by making a namespace).
    public static let unavailable: String? = {
        guard geteuid() == 0 else { return "network namespaces need root (CI runs as root)" }
        guard FileManager.default.isExecutableFile(atPath: ip) else { return "\(ip) (iproute2) is not installed" }
        let probe = "bureau-probe-\(getpid())"
        do {
            try SystemCommand.run([ip, "netns", "add", probe])
        } catch {
            return "`ip netns add` fails here: \(error)"
        }
        _ = try? SystemCommand.run([ip, "netns", "del", probe])
        return nil
    }()

    static let ip = "/usr/sbin/ip"
    static let tc = "/usr/sbin/tc"

    /// Makes a host per name in `subnet` (0 to 3), addresses its first, second, … in order;
    /// throws if this process's hosts already use the subnet.
    public init(_ names: [String], subnet: Int = 0) throws {
        guard (0...3).contains(subnet), names.count <= 61 else {
            throw TestServerError("hosts take one of the subnets 0 to 3, at most 61 in each: \(subnet), \(names.count)")
        }
        let base = 64 * subnet
        let taken = Self.subnetsInUse.withLock { $0.insert(subnet).inserted }
        guard taken else {
            throw TestServerError("198.51.100.\(base)/26 (subnet \(subnet)) is in use by other hosts of this process")
        }
        self.subnet = subnet
        bridgeAddress = "198.51.100.\(base + 62)"
        Self.removeLeftovers()
        tag = Tag(process: getpid(), serial: Self.serials.wrappingAdd(1, ordering: .relaxed).newValue).text
        bridge = "bb\(tag)"
        do {
            try SystemCommand.run([Self.ip, "link", "add", bridge, "type", "bridge"])
            try SystemCommand.run([Self.ip, "addr", "add", "\(bridgeAddress)/26", "dev", bridge])
            try SystemCommand.run([Self.ip, "link", "set", bridge, "up"])
            for (index, name) in names.enumerated() {
                let namespace = "bureau-\(tag)-\(name)"
                let inside = "bi\(tag)\(index)"
                let outside = "bo\(tag)\(index)"
                let address = "198.51.100.\(base + index + 1)"
                try SystemCommand.run([Self.ip, "netns", "add", namespace])
                hosts.append(Host(name: name, namespace: namespace, address: address, bridgeSide: outside))
                try SystemCommand.run([Self.ip, "link", "add", inside, "type", "veth", "peer", "name", outside])
                try SystemCommand.run([Self.ip, "link", "set", inside, "netns", namespace])
                try SystemCommand.run([Self.ip, "link", "set", outside, "master", bridge])
                try SystemCommand.run([Self.ip, "link", "set", outside, "up"])
                try SystemCommand.run([Self.ip, "-n", namespace, "addr", "add", "\(address)/26", "dev", inside])
                try SystemCommand.run([Self.ip, "-n", namespace, "link", "set", inside, "up"])
                try SystemCommand.run([Self.ip, "-n", namespace, "link", "set", "lo", "up"])
            }
        } catch {
            remove()
            throw error
        }
    }

    public func host(_ name: String) throws -> Host {
        guard let host = hosts.first(where: { $0.name == name }) else {
            throw TestServerError("no host \(name) among \(hosts.map(\.name))")
        }
        return host
    }

    /// `arguments` run in `host`'s namespace (the command as the first argument).
    public func command(_ host: String, _ arguments: [String]) throws -> (executable: String, arguments: [String]) {
        (Self.ip, ["netns", "exec", try self.host(host).namespace] + arguments)
    }

    /// Cuts `host` off (its link to the bridge down), or joins it again.
    public func partition(_ host: String, _ cut: Bool) throws {
        try SystemCommand.run([Self.ip, "link", "set", try self.host(host).bridgeSide, cut ? "down" : "up"])
    }

    /// Loss (a percentage) and delay on every frame `host` sends and receives; returns how:
    /// `tc netem` on both ends of its link where the kernel has it, else an ``ImpairedLink`` in
    /// this process between the host's link and the bridge, whose losses `seed` chooses (netem
    /// draws its own).
    @discardableResult
    public func impair(_ host: String, loss: Int, delayMilliseconds: Int, seed: UInt64) throws -> String {
        let target = try self.host(host)
        let index = index(of: host)
        let netem = ["netem", "delay", "\(delayMilliseconds)ms", "loss", "\(loss)%"]
        if (try? SystemCommand.run([Self.tc, "qdisc", "replace", "dev", target.bridgeSide, "root"] + netem)) != nil {
            try SystemCommand.run(
                [
                    Self.ip, "netns", "exec", target.namespace, Self.tc, "qdisc", "replace", "dev", "bi\(tag)\(index)",
                    "root",
                ]
                    + netem)
            netemHosts.insert(host)
            return "tc netem"
        }
        // The host's link joins a bridge of its own with one TAP device; the other joins the
        // main bridge; this process copies frames between the two, losing and holding them.
        let (own, first, second) = ("bx\(tag)\(index)", "ta\(tag)\(index)", "tb\(tag)\(index)")
        let link = try ImpairedLink(
            names: (first, second), lossPercent: loss, delay: .milliseconds(delayMilliseconds), seed: seed)
        links[host] = (link, own)
        try SystemCommand.run([Self.ip, "link", "add", own, "type", "bridge"])
        try SystemCommand.run([Self.ip, "link", "set", target.bridgeSide, "nomaster"])
        try SystemCommand.run([Self.ip, "link", "set", target.bridgeSide, "master", own])
        try SystemCommand.run([Self.ip, "link", "set", first, "master", own])
        try SystemCommand.run([Self.ip, "link", "set", second, "master", bridge])
        for device in [own, first, second] { try SystemCommand.run([Self.ip, "link", "set", device, "up"]) }
        return "a user-space link (this kernel has no tc netem)"
    }

    /// Takes the loss and delay off again; returns how many frames a user-space link passed on
    /// and lost (nil for netem, which does not count them).
    @discardableResult
    public func heal(_ host: String) throws -> (forwarded: Int, dropped: Int)? {
        let target = try self.host(host)
        if netemHosts.remove(host) != nil {
            try SystemCommand.run([Self.tc, "qdisc", "del", "dev", target.bridgeSide, "root"])
            try SystemCommand.run(
                [
                    Self.ip, "netns", "exec", target.namespace, Self.tc, "qdisc", "del", "dev",
                    "bi\(tag)\(index(of: host))", "root",
                ])
        }
        if let (link, own) = links.removeValue(forKey: host) {
            try SystemCommand.run([Self.ip, "link", "set", target.bridgeSide, "nomaster"])
            try SystemCommand.run([Self.ip, "link", "set", target.bridgeSide, "master", bridge])
            try SystemCommand.run([Self.ip, "link", "del", own])
            link.stop()
            return (link.forwarded.load(ordering: .relaxed), link.dropped.load(ordering: .relaxed))
        }
        return nil
    }

    private func index(of host: String) -> Int { hosts.firstIndex { $0.name == host } ?? 0 }

    /// Deletes the namespaces and the bridge (the veth pairs go with them). Stop what runs in
    /// the namespaces first: deleting one does not end its processes.
    ///
    /// What cannot be deleted is said on stderr; a subnet whose bridge is still there is not
    /// given back, so that no later set of this process routes through it.
    public func remove() {
        guard !released else { return }
        for host in links.keys { Self.tryCleanUp("healing \(host)") { _ = try heal(host) } }
        for host in hosts {
            Self.tryCleanUp("deleting namespace \(host.namespace)") {
                try SystemCommand.run([Self.ip, "netns", "del", host.namespace])
            }
        }
        hosts = []
        let bridgeGone = Self.tryCleanUp("deleting bridge \(bridge)") {
            try SystemCommand.run([Self.ip, "link", "del", bridge])
        }
        guard bridgeGone || !Self.linkExists(bridge) else { return }
        released = released || Self.subnetsInUse.withLock { $0.remove(subnet) != nil }
    }

    /// Runs one step of removing hosts; a failure is said on stderr (the tests go on): true if it worked.
    @discardableResult
    private static func tryCleanUp(_ what: String, _ step: () throws -> Void) -> Bool {
        do {
            try step()
            return true
        } catch {
            FileHandle.standardError.write(Data("network hosts: \(what) failed: \(error)\n".utf8))
            return false
        }
    }

    /// Whether an interface of that name is there (a bridge already deleted is not).
    private static func linkExists(_ name: String) -> Bool {
        (try? SystemCommand.run([ip, "link", "show", name])) != nil
    }

    /// Whether ``remove()`` gave the subnet back (once: another set may have taken it since).
    private var released = false

    deinit { remove() }

    /// What tells one set of hosts from another: the id of the process that made it and a
    /// serial, in hexadecimal (8 digits, so that `bo` + tag + index stays within the 15
    /// characters of a Linux interface name).
    public struct Tag: Equatable, Sendable {
        public let process: pid_t
        public let serial: UInt8

        public var text: String { String(format: "%06x%02x", UInt32(truncatingIfNeeded: process), serial) }

        /// The tag a name made by ``NetworkHosts`` carries after `prefix`, if it has one.
        init?(in name: Substring, after prefix: String) {
            guard name.hasPrefix(prefix) else { return nil }
            let digits = name.dropFirst(prefix.count).prefix(8)
            guard digits.count == 8, digits.allSatisfy(\.isHexDigit),
                let process = pid_t(digits.prefix(6), radix: 16), let serial = UInt8(digits.suffix(2), radix: 16)
            else { return nil }
            self.init(process: process, serial: serial)
        }

        public init(process: pid_t, serial: UInt8) {
            self.process = process
            self.serial = serial
        }

        /// Whether the process that made it has ended (`kill(pid, 0)` finds no such process).
        public var isLeftOver: Bool { kill(process, 0) != 0 && errno == ESRCH }
    }

    /// Deletes the namespaces and bridges made by processes that have ended. Their processes
    /// are left alone: any still running in a namespace was started by someone else's run.
    static func removeLeftovers() {
        let namespaces = (try? SystemCommand.run([ip, "netns", "list"])) ?? ""
        for line in namespaces.split(separator: "\n") {
            // `name (id: N)`
            guard let name = line.split(separator: " ").first,
                let tag = Tag(in: name, after: "bureau-"), tag.isLeftOver
            else { continue }
            _ = try? SystemCommand.run([ip, "netns", "del", String(name)])
        }
        let bridges = (try? SystemCommand.run([ip, "-o", "link", "show", "type", "bridge"])) ?? ""
        for line in bridges.split(separator: "\n") {
            // `7: bb00a1b2c3: <BROADCAST,…`
            let fields = line.split(separator: " ")
            guard fields.count > 1 else { continue }
            let name = fields[1].prefix { $0 != ":" && $0 != "@" }
            guard let tag = Tag(in: name, after: "bb") ?? Tag(in: name, after: "bx"), tag.isLeftOver,
                name.count <= 12
            else { continue }
            _ = try? SystemCommand.run([ip, "link", "del", String(name)])
        }
    }
}
