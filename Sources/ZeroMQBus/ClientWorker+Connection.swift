import BureauSchemas
import Bus
import Guards
import Logging
import SwiftProtobuf
import ZeroMQ

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The connection as the worker sees it (what its monitors report, and every waiting caller
/// failed when it can never get in), and what its timers say is due.
extension ClientWorker {

    /// Takes in what a monitor reports; when it shows the client can never get in, fails every
    /// waiting publish, ping and subscription with the reason instead of letting them time out.
    func receiveMonitorEvents(_ monitor: ZMQSocket) {
        while let frames = received(.connectionEvent, { try monitor.receiveMessage(wait: false) }) {
            guard let event = ZMQMonitorEvent.decode(frames),
                let reason = diagnosis?.record(event)
            else { continue }
            logger.error(
                "cannot use the bus",
                metadata: ["bus.endpoint": "\(endpoints.ingress)", "error.description": "\(reason)"])
            refuseEverything(BusError.connectionRefused(endpoint: endpoints.ingress, reason: reason))
        }
    }

    /// How many replies in a row may hold an envelope that cannot be read before the
    /// subscription fails.
    static let unreadableRepliesBeforeFailing = 3

    /// Ends a subscription whose cursor is past the bus's head: it fails with
    /// ``BusError/aheadOfLog(position:head:epoch:)``, after what it was already given.
    func end(_ id: Int, aheadOf head: UInt64, epoch: UInt64) {
        guard let position = subscriptions[id]?.tracker.cursor else { return }
        logger.error(
            "the bus's log ends before what this subscriber has read; the subscription ends",
            metadata: ["bus.position": "\(position)", "bus.head": "\(head)", "bus.epoch": "\(epoch)"])
        fail(id, .aheadOfLog(position: position, head: head, epoch: epoch))
    }

    /// Ends subscription `id` with `error`, after what it was already given.
    func fail(_ id: Int, _ error: BusError) {
        guard let subscription = subscriptions.removeValue(forKey: id) else { return }
        timers.unsubscribed(id)
        subscriptionOrder.removeAll { $0 == id }
        if case .aheadOfLog = error {
        } else {
            logger.error("the subscription ends", metadata: ["bus.error": "\(error)"])
        }
        subscription.socket.close()
        subscription.channel.push([.failure(error)])
        subscription.channel.finish()
    }

    func refuseEverything(_ error: BusError) {
        for (id, publish) in publishes {
            timers.publishSettled(id)
            publish.continuation.resume(throwing: error)
        }
        for (id, ping) in pings {
            timers.pingSettled(id)
            ping.continuation.resume(throwing: error)
        }
        publishes = [:]
        pings = [:]
        for id in subscriptionOrder {
            guard let subscription = subscriptions.removeValue(forKey: id) else { continue }
            timers.unsubscribed(id)
            subscription.socket.close()
            subscription.channel.push([.failure(error)])
            subscription.channel.finish()
        }
        subscriptionOrder = []
    }

    /// What a request that got no answer from `endpoint` fails with: the monitor's reason when
    /// it knows why, else why the last send failed, else ``BusError/noAnswer(endpoint:seconds:)``.
    func unanswered(_ endpoint: String, seconds: Double) -> BusError {
        if let reason = diagnosis?.explanation { return .connectionFailed(endpoint: endpoint, reason: reason) }
        if let failure = lastSendFailure[endpoint] {
            return .connectionFailed(endpoint: endpoint, reason: "the request could not be sent: \(failure)")
        }
        return .noAnswer(endpoint: endpoint, seconds: seconds)
    }

    /// Does what the timers say is due.
    func perform(_ action: ClientTimers.Action?) {
        switch action {
        case .resendPublish(let id):
            // The same request id and envelopes: the daemon recognises what it already committed.
            guard let pending = publishes[id] else { return }
            send(pending.frames, on: ingress, to: endpoints.ingress)
        case .failPublish(let id):
            publishes.removeValue(forKey: id)?.continuation.resume(
                throwing: unanswered(endpoints.ingress, seconds: options.publishTimeout.inSeconds))
        case .failPing(let id):
            pings.removeValue(forKey: id)?.continuation.resume(
                throwing: unanswered(endpoints.read, seconds: 0))
        case .readTimedOut:
            // No longer in flight: requestReads sends it again.
            break
        case .disconnected(let id):
            subscriptions[id]?.channel.push([.connection(false)])
        case .connected(let id):
            subscriptions[id]?.channel.push([.connection(true)])
        case nil:
            break
        }
    }

    /// Sends a read for every subscription that is catching up, has room, and has none in flight.
    func requestReads() {
        for id in subscriptionOrder {
            guard let subscription = subscriptions[id], !subscription.tracker.isLive,
                timers.mayRequestRead(for: id, now: clock.now), subscription.channel.hasRoom
            else { continue }
            var request = Bureau_Bus_ReadRequest()
            request.after = subscription.tracker.cursor
            request.maxEvents = UInt32(min(BusLimits.maxReadEvents, subscription.channel.capacity))
            request.typePrefixes = subscription.tracker.filter.prefixes
            request.batched = true
            request.afterGap = subscription.gapNoticed
            // Proto3 scalars do not fail to encode; if one did, the read is asked again next turn.
            guard let body = try? request.serializedData() else { continue }
            let requestID = UInt64.random(in: 1...UInt64.max >> 1)
            let frames = [
                Data(WireProtocol.version.utf8), Data(WireProtocol.read.utf8), WireProtocol.requestID(requestID), body,
            ]
            if send(frames, on: reader, to: endpoints.read) {
                subscription.gapNoticed = false
                timers.readSent(for: id, requestID: requestID, after: request.after, now: clock.now)
            } else {
                timers.readNotSent(for: id, now: clock.now)
            }
        }
    }

    func shutDown() {
        for publish in publishes.values { publish.continuation.resume(throwing: BusError.closed) }
        for ping in pings.values { ping.continuation.resume(throwing: BusError.closed) }
        publishes = [:]
        pings = [:]
        for subscription in subscriptions.values {
            subscription.socket.close()
            subscription.channel.finish()
        }
        subscriptions = [:]
        ingress.close()
        reader.close()
        for monitor in monitors { monitor.close() }
    }
}
