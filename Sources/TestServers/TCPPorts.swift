#if canImport(Glibc)
    import Glibc
#endif

/// Ports for daemons that tests start with `--listen HOST:PORT` (which takes PORT, PORT+1 and
/// PORT+2).
public enum TCPPorts {
    /// Below Linux's ephemeral range (32768–60999): a port the system picked for someone's
    /// outgoing connection cannot take one of these between the probe and the daemon's bind.
    static let range = 20_000...29_997

    /// A port whose next two are free too (each bound and released on every address), chosen
    /// at random from a range the system never hands out by itself.
    public static func freeTriple() throws -> Int {
        for _ in 0..<200 {
            let port = Int.random(in: range)
            if (port...(port + 2)).allSatisfy(isFree) { return port }
        }
        throw TestServerError("no three free TCP ports in a row in \(range)")
    }

    /// One free port from the same range.
    public static func free() throws -> Int {
        for _ in 0..<200 {
            let port = Int.random(in: range)
            if isFree(port) { return port }
        }
        throw TestServerError("no free TCP port in \(range)")
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
