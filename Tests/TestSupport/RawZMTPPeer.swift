import Foundation
import Guards

#if canImport(Glibc)
    import Glibc
#endif

/// A peer that speaks ZMTP 3.0 by hand over an ipc socket, as a hostile client could. libzmq
/// hands a message to its connection only once its last frame is sent, so a libzmq peer cannot
/// send a message that never ends; this one writes each frame as it goes.
///
/// Its initialiser blocks until the other side's greeting and READY have come (at most
/// 10 seconds): call it off the cooperative pool.
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
        // The other side's greeting and READY before any frame: libzmq takes a message frame that
        // comes before it has sent its own READY for a broken handshake and ends the connection
        // (with the frames written at once, a run of the memory bound's test in three found every
        // peer dropped on its first frame, and the daemon's memory never grew).
        do {
            try awaitHandshake()
        } catch {
            Glibc.close(fd)
            throw TestSupportError("\(path): \(error)")
        }
    }

    /// Reads the other side's greeting (64 bytes) and its READY command.
    private func awaitHandshake() throws {
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        guard setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size)) == 0 else {
            throw TestSupportError("SO_RCVTIMEO: errno \(errno)")
        }
        let greeting = try read(count: 64)
        guard greeting.first == 0xFF, greeting[10] == 3 else {
            throw TestSupportError("no ZMTP 3 greeting: \(greeting.prefix(12).map { String($0) })")
        }
        // A command: flags 0x04 (short: one byte of size) or 0x06 (long: eight).
        let flags = try read(count: 1)[0]
        guard flags & 0x04 != 0 else { throw TestSupportError("a frame (flags \(flags)) where READY was due") }
        let size = try read(count: flags & 0x02 != 0 ? 8 : 1).reduce(0) { $0 << 8 | Int($1) }
        guard size <= 4096 else { throw TestSupportError("a command of \(size) bytes where READY was due") }
        let command = try read(count: size)
        guard command.starts(with: [5] + Array("READY".utf8)) else {
            throw TestSupportError("\(String(decoding: command.prefix(8), as: UTF8.self)) where READY was due")
        }
    }

    /// Reads exactly `count` bytes, or throws (the connection ended, or nothing came in time).
    private func read(count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var received = 0
        while received < count {
            let got = bytes.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return recv(fd, base + received, count - received, 0)
            }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else {
                throw TestSupportError(got == 0 ? "the connection ended in the handshake" : "recv: errno \(errno)")
            }
            received += got
        }
        return bytes
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
