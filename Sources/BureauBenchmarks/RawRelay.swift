import Foundation
import Guards
import Synchronization
import ZeroMQ
import ZeroMQBus

/// PUSH → relay (PULL → PUB) → SUB, one message per event: the raw libzmq path a bus's events
/// take, which the bus benchmarks measure Bureau beside.
enum RawRelay {
    /// Ends a run: the relay forwards it and stops.
    static let stop = Data([0xFE])
    /// Sent until the subscriber receives one, so that it has joined before the run starts.
    static let probe = Data([0xFF])

    /// Forwards every message from a PULL bound at `ingress` to a PUB bound at `egress` until
    /// the stop message (forwarded too). With `curveSecretKey` both sockets are CURVE servers
    /// (any client key is let in: the baseline measures the encryption, not an allow-list).
    static func serve(
        context: ZMQContext, ingress: String, egress: String, curveSecretKey: String?, ready: () -> Void
    ) throws {
        let pull = try context.socket(.pull)
        let pub = try context.socket(.pub)
        defer {
            pull.close()
            pub.close()
        }
        if let curveSecretKey {
            try pull.setCurveServer(secretKey: curveSecretKey)
            try pub.setCurveServer(secretKey: curveSecretKey)
        }
        try pub.setSendHighWaterMark(0)
        try pull.bind(ingress)
        try pub.bind(egress)
        ready()
        while let frame = try pull.receiveFrame() {
            try pub.send(frame.bytes)
            if frame.bytes == stop { return }
        }
    }

    /// Messages per second of `messageSize` bytes pushed to `ingress` until a SUB on `egress`
    /// has received them all; CURVE clients when `curve` is given.
    static func measure(
        context: ZMQContext, ingress: String, egress: String, messageSize: Int, total: Int,
        curve: ZeroMQBusClient.Options.Curve?
    ) throws -> Double {
        func secure(_ socket: ZMQSocket) throws {
            if let curve { try socket.setCurveClient(serverKey: curve.serverKey, keys: curve.keys) }
        }
        let sub = try context.socket(.sub)
        defer { sub.close() }
        try secure(sub)
        try sub.setReceiveHighWaterMark(0)
        try sub.subscribe("")
        try sub.connect(egress)
        // Wait until the subscription has reached the PUB (the slow joiner), with probes.
        let probeSocket = try context.socket(.push)
        try secure(probeSocket)
        try probeSocket.setLinger(milliseconds: 0)
        try probeSocket.connect(ingress)
        try sub.setReceiveTimeout(milliseconds: 100)
        var joined = false
        for _ in 0..<300 where !joined {
            _ = try probeSocket.send(probe, wait: false)
            do {
                joined = try sub.receiveFrame() != nil
            } catch let error as ZMQError where error.wouldBlock {
                continue  // the 100 ms receive timeout: not joined yet
            }
        }
        probeSocket.close()
        guard joined else { throw CLIFailure("the relay at \(ingress) never answered a probe") }
        // Bounded, so that a sender that failed does not leave the run waiting for ever.
        try sub.setReceiveTimeout(milliseconds: 30_000)
        let message = Data(repeating: 0x61, count: messageSize)
        let started = ContinuousClock.now
        let keys = curve
        let failure = Mutex<(any Error)?>(nil)
        let sender = try OwnThread(name: "push") {
            do {
                let push = try context.socket(.push)
                defer { push.close() }
                if let keys { try push.setCurveClient(serverKey: keys.serverKey, keys: keys.keys) }
                try push.setSendHighWaterMark(0)
                try push.connect(ingress)
                for _ in 0..<total { try push.send(message) }
                try push.send(stop)
            } catch {
                failure.withLock { $0 = error }
            }
        }
        var received = 0
        while let frame = try sub.receiveFrame() {
            if frame.bytes == stop { break }
            if frame.bytes.count == messageSize { received += 1 }
        }
        let elapsed = (ContinuousClock.now - started).inSeconds
        sender.join()
        if let error = failure.withLock({ $0 }) { throw CLIFailure("the raw relay's sender failed: \(error)") }
        guard received == total else {
            throw CLIFailure("the raw relay delivered \(received) of \(total) messages, then nothing for 30 s")
        }
        return Double(received) / elapsed
    }
}
