#if canImport(Glibc)
    import Glibc
#endif

/// A TCP listener on 127.0.0.1 that takes connections (the kernel completes them in its
/// backlog) and never answers: a server that hangs. ``stop()`` (or releasing it) closes it.
public final class HangingServer: @unchecked Sendable {
    public let port: Int
    private var fd: Int32

    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw TestSupportError("bind/listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else {
            close(fd)
            throw TestSupportError("getsockname: errno \(errno)")
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        self.fd = fd
    }

    public func stop() {
        if fd >= 0 { close(fd) }
        fd = -1
    }

    deinit { stop() }
}
