import Foundation
import Guards

#if canImport(Glibc)
    import Glibc
#endif

/// A peer that speaks ZMTP 3.0 by hand over an ipc socket, as a hostile client could. libzmq
/// hands a message to its connection only once its last frame is sent, so a libzmq peer cannot
/// send a message that never ends; this one writes each frame as it goes.
public final class RawZMTPPeer: @unchecked Sendable {
    private let fd: Int32

    /// Connects to `endpoint` (`ipc://PATH`) and greets it as a `socketType` with the NULL mechanism.
    public init(ipc endpoint: String, socketType: String = "DEALER") throws {
        let path = String(endpoint.dropFirst("ipc://".count))
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            Glibc.close(fd)
            throw TestSupportError("the path \(path) is too long for a unix socket")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            Glibc.close(fd)
            throw TestSupportError("connect \(path): errno \(code)")
        }
        // The greeting: signature, version 3.0, mechanism NULL, not as server, filler.
        var greeting: [UInt8] = [0xFF, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x7F, 3, 0]
        greeting += Array("NULL".utf8) + [UInt8](repeating: 0, count: 16)
        greeting += [0] + [UInt8](repeating: 0, count: 31)
        // READY, with the socket type.
        var ready: [UInt8] = [5] + Array("READY".utf8)
        let name = Array("Socket-Type".utf8)
        let value = Array(socketType.utf8)
        ready += [UInt8(name.count)] + name + Self.bigEndian(UInt32(value.count)) + value
        guard write(greeting), write([0x04, UInt8(ready.count)] + ready) else {
            Glibc.close(fd)
            throw TestSupportError("the greeting could not be written to \(path)")
        }
    }

    /// Writes one frame, `more` saying that others follow; false once the connection is gone.
    public func send(frame: Data, more: Bool) -> Bool {
        let flags: UInt8 = (more ? 0x01 : 0) | 0x02
        guard write([flags] + Self.bigEndian(UInt64(frame.count))) else { return false }
        return frame.withUnsafeBytes { write($0) }
    }

    public func close() {
        Glibc.close(fd)
    }

    private func write(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { write($0) }
    }

    private func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var written = 0
        while written < bytes.count {
            let count = Glibc.send(fd, base + written, bytes.count - written, Int32(MSG_NOSIGNAL))
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            written += count
        }
        return true
    }

    private static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }
}
