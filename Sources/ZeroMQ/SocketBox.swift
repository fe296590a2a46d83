#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Moves a socket to the thread that will own it; taken exactly once.
final class SocketBox: @unchecked Sendable {
    private var socket: ZMQSocket?
    init(_ socket: ZMQSocket) { self.socket = socket }
    func take() -> ZMQSocket? {
        defer { socket = nil }
        return socket
    }
}
