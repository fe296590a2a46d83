import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Ports for daemons that tests start with `--listen HOST:PORT` (which takes PORT, PORT+1 and
/// PORT+2).
public enum TCPPorts {
    /// Below Linux's ephemeral range (32768–60999): a port the system picked for someone's
    /// outgoing connection cannot take one of these between the probe and the daemon's bind.
    static let range = 20_000...29_997

    /// The ports handed out so far in this process, never handed out again: two tests running
    /// at once drew the same port, and the one that bound it second failed (EADDRINUSE; CI's
    /// MetricsEndpointTests). Only this process's tests take ports from the range.
    private static let handedOut = Mutex<Set<Int>>([])

    /// A port whose next two are free too (each bound and released on IPv4's any address), chosen
    /// at random from a range the system never hands out by itself.
    public static func freeTriple() throws -> Int {
        try take(count: 3, what: "three free TCP ports in a row")
    }

    /// One free port from the same range.
    public static func free() throws -> Int {
        try take(count: 1, what: "a free TCP port")
    }

    private static func take(count: Int, what: String) throws -> Int {
        for _ in 0..<200 {
            let port = Int.random(in: range)
            let ports = port...(port + count - 1)
            let taken = handedOut.withLock { handedOut -> Bool in
                guard ports.allSatisfy({ !handedOut.contains($0) }) else { return false }
                handedOut.formUnion(ports)
                return true
            }
            guard taken else { continue }
            if ports.allSatisfy(isFree) { return port }
        }
        throw TestServerError("no \(what) in \(range) that this process has not handed out already")
    }

    static func isFree(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = INADDR_ANY
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
