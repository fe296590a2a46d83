import CZeroMQ

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One event a socket monitor reports (`zmq_socket_monitor`): what happened to one of the
/// socket's connections, with the value libzmq gives it.
public struct ZMQMonitorEvent: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case connected
        case connectDelayed
        case connectRetried
        case closed
        case disconnected
        case handshakeSucceeded
        /// The connection ended during the handshake, libzmq does not know why (`value` is an errno).
        case handshakeFailedNoDetail
        /// The peer broke the protocol; `value` is a `ZMQ_PROTOCOL_ERROR_*` code.
        case handshakeFailedProtocol
        /// The server's authenticator refused this peer; `value` is the ZAP status code (400: denied).
        case handshakeFailedAuth
        case other(UInt16)
    }

    public var kind: Kind
    public var value: UInt32
    /// The endpoint the connection belongs to, e.g. `tcp://198.51.100.1:7000`.
    public var endpoint: String

    public init(kind: Kind, value: UInt32 = 0, endpoint: String = "") {
        self.kind = kind
        self.value = value
        self.endpoint = endpoint
    }

    /// `ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH`: one side speaks CURVE, the other does not.
    public static let mechanismMismatch = UInt32(ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)
    /// `ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC`: a CURVE box could not be opened.
    public static let cryptographic = UInt32(ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC)

    /// Decodes a monitor message: a 6-byte frame (event, little-endian `UInt16`; value,
    /// `UInt32`) and the endpoint. Nil for any other shape.
    public static func decode(_ frames: [Data]) -> ZMQMonitorEvent? {
        guard frames.count == 2, frames[0].count == 6 else { return nil }
        let bytes = Array(frames[0])
        let code = UInt16(bytes[0]) | UInt16(bytes[1]) << 8
        let value = (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[2 + $1]) << (8 * UInt32($1)) }
        return ZMQMonitorEvent(
            kind: Kind(code: code), value: value, endpoint: String(decoding: frames[1], as: UTF8.self))
    }
}

extension ZMQMonitorEvent.Kind {
    init(code: UInt16) {
        switch Int32(code) {
        case ZMQ_EVENT_CONNECTED: self = .connected
        case ZMQ_EVENT_CONNECT_DELAYED: self = .connectDelayed
        case ZMQ_EVENT_CONNECT_RETRIED: self = .connectRetried
        case ZMQ_EVENT_CLOSED: self = .closed
        case ZMQ_EVENT_DISCONNECTED: self = .disconnected
        case ZMQ_EVENT_HANDSHAKE_SUCCEEDED: self = .handshakeSucceeded
        case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL: self = .handshakeFailedNoDetail
        case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL: self = .handshakeFailedProtocol
        case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH: self = .handshakeFailedAuth
        default: self = .other(code)
        }
    }
}

extension ZMQSocket {
    /// Reports this socket's connection events as ``ZMQMonitorEvent`` messages to a PAIR socket
    /// that connects to `endpoint` (an `inproc://` address of this socket's context).
    public func monitor(_ endpoint: String) throws {
        let socket = try live("zmq_socket_monitor(\(endpoint))")
        guard zmq_socket_monitor(socket, endpoint, ZMQ_EVENT_ALL) == 0 else {
            throw ZMQError.last("zmq_socket_monitor(\(endpoint))")
        }
    }
}
