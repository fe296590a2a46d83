import CZeroMQ

/// The libzmq socket types Bureau uses.
public enum ZMQSocketKind: Sendable, CustomStringConvertible {
    case pub, sub, xpub, xsub, dealer, router, push, pull, pair, req, rep, stream

    var rawValue: Int32 {
        switch self {
        case .pub: ZMQ_PUB
        case .sub: ZMQ_SUB
        case .xpub: ZMQ_XPUB
        case .xsub: ZMQ_XSUB
        case .dealer: ZMQ_DEALER
        case .router: ZMQ_ROUTER
        case .push: ZMQ_PUSH
        case .pull: ZMQ_PULL
        case .pair: ZMQ_PAIR
        case .req: ZMQ_REQ
        case .rep: ZMQ_REP
        case .stream: ZMQ_STREAM
        }
    }

    public var description: String {
        switch self {
        case .pub: "PUB"
        case .sub: "SUB"
        case .xpub: "XPUB"
        case .xsub: "XSUB"
        case .dealer: "DEALER"
        case .router: "ROUTER"
        case .push: "PUSH"
        case .pull: "PULL"
        case .pair: "PAIR"
        case .req: "REQ"
        case .rep: "REP"
        case .stream: "STREAM"
        }
    }
}
