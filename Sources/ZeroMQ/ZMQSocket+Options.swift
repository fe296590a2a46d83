import CZeroMQ

/// The socket options the bus needs, named as libzmq documents them.
extension ZMQSocket {
    /// How long, in milliseconds, unsent messages linger after close: 0 drops them, -1 waits forever.
    public func setLinger(milliseconds: Int32) throws {
        try setOption(ZMQ_LINGER, int: milliseconds, name: "ZMQ_LINGER")
    }

    /// The most messages queued for sending per peer; PUB drops beyond it, others block.
    public func setSendHighWaterMark(_ messages: Int32) throws {
        try setOption(ZMQ_SNDHWM, int: messages, name: "ZMQ_SNDHWM")
    }

    /// The most messages queued for receiving per peer.
    public func setReceiveHighWaterMark(_ messages: Int32) throws {
        try setOption(ZMQ_RCVHWM, int: messages, name: "ZMQ_RCVHWM")
    }

    /// Peers that send a frame larger than this are disconnected by libzmq; -1 means no limit.
    public func setMaxMessageSize(_ bytes: Int64) throws {
        try setOption(ZMQ_MAXMSGSIZE, int64: bytes, name: "ZMQ_MAXMSGSIZE")
    }

    /// ROUTER: fail with `EHOSTUNREACH` instead of dropping a message to an unknown peer.
    public func setRouterMandatory(_ on: Bool) throws {
        try setOption(ZMQ_ROUTER_MANDATORY, int: on ? 1 : 0, name: "ZMQ_ROUTER_MANDATORY")
    }

    /// Queue messages only to completed connections.
    public func setImmediate(_ on: Bool) throws {
        try setOption(ZMQ_IMMEDIATE, int: on ? 1 : 0, name: "ZMQ_IMMEDIATE")
    }

    /// The first reconnection delay and the cap of its exponential growth, in milliseconds.
    public func setReconnectInterval(milliseconds: Int32, max: Int32) throws {
        try setOption(ZMQ_RECONNECT_IVL, int: milliseconds, name: "ZMQ_RECONNECT_IVL")
        try setOption(ZMQ_RECONNECT_IVL_MAX, int: max, name: "ZMQ_RECONNECT_IVL_MAX")
    }

    /// SUB: receive messages whose first frame starts with `prefix`; the empty prefix selects all.
    public func subscribe(_ prefix: String) throws {
        try setOption(ZMQ_SUBSCRIBE, bytes: Array(prefix.utf8), name: "ZMQ_SUBSCRIBE")
    }

    /// SUB: stop receiving what `prefix` selected.
    public func unsubscribe(_ prefix: String) throws {
        try setOption(ZMQ_UNSUBSCRIBE, bytes: Array(prefix.utf8), name: "ZMQ_UNSUBSCRIBE")
    }

    /// The identity a ROUTER peer sees for this socket.
    public func setRoutingID(_ id: [UInt8]) throws {
        try setOption(ZMQ_ROUTING_ID, bytes: id, name: "ZMQ_ROUTING_ID")
    }

    /// Make this socket a CURVE server with the given Z85 secret key.
    public func setCurveServer(secretKey: String) throws {
        try setOption(ZMQ_CURVE_SERVER, int: 1, name: "ZMQ_CURVE_SERVER")
        try setOption(ZMQ_CURVE_SECRETKEY, bytes: Array(secretKey.utf8) + [0], name: "ZMQ_CURVE_SECRETKEY")
    }

    /// Make this socket a CURVE client of the server whose Z85 public key is given.
    public func setCurveClient(serverKey: String, keys: CurveKeyPair) throws {
        try setOption(ZMQ_CURVE_SERVERKEY, bytes: Array(serverKey.utf8) + [0], name: "ZMQ_CURVE_SERVERKEY")
        try setOption(ZMQ_CURVE_PUBLICKEY, bytes: Array(keys.publicKey.utf8) + [0], name: "ZMQ_CURVE_PUBLICKEY")
        try setOption(ZMQ_CURVE_SECRETKEY, bytes: Array(keys.secretKey.utf8) + [0], name: "ZMQ_CURVE_SECRETKEY")
    }

    /// The ZAP domain this socket authenticates in; setting one makes libzmq consult the ZAP handler.
    public func setZAPDomain(_ domain: String) throws {
        try setOption(ZMQ_ZAP_DOMAIN, bytes: Array(domain.utf8), name: "ZMQ_ZAP_DOMAIN")
    }

    /// How long a blocking receive waits, in milliseconds; -1 waits forever.
    public func setReceiveTimeout(milliseconds: Int32) throws {
        try setOption(ZMQ_RCVTIMEO, int: milliseconds, name: "ZMQ_RCVTIMEO")
    }

    /// How long a blocking send waits, in milliseconds; -1 waits forever.
    public func setSendTimeout(milliseconds: Int32) throws {
        try setOption(ZMQ_SNDTIMEO, int: milliseconds, name: "ZMQ_SNDTIMEO")
    }
}
