import Bus
import EventLog
import Foundation
import Runtime

/// The requests sent from this front-end, newest last: pending until the answer correlated
/// with each arrives, then accepted or rejected with the module's reason.
public struct RequestTracker: Sendable, Equatable {
    public private(set) var requests: [TrackedRequest] = []

    /// How many finished requests are remembered.
    public static let limit = 20

    public init() {}

    /// The request shown on the request line.
    public var latest: TrackedRequest? { requests.last }

    public var pendingCount: Int { requests.filter { $0.status == .pending }.count }

    /// Routes `url`: the event to publish (recorded as pending under `id`), or nil when the URL
    /// does not route (recorded as failed with the router's precise reason). With a
    /// `traceParent`, the root span of the request's trace, the request is recorded as traced
    /// and published carrying it (the trace id being `id`, its correlation).
    mutating func start(_ url: String, router: CommandRouter, id: EventID, traceParent: UInt64?) -> OutgoingEvent? {
        do {
            let route = try router.route(url)
            var outgoing = try route.request.outgoing(id: id, module: "")
            if let traceParent { outgoing.traceParent = traceParent }
            append(TrackedRequest(id: id, url: url, command: route.command, isTraced: traceParent != nil))
            return outgoing
        } catch let error as CommandError {
            append(TrackedRequest(id: nil, url: url, status: .failed(error.description)))
        } catch {
            append(TrackedRequest(id: nil, url: url, status: .failed("the request does not encode: \(error)")))
        }
        return nil
    }

    /// The bus did not take the request; its trace, if open, ends failed.
    mutating func publishFailed(_ id: EventID, reason: String) -> [Effect] {
        var effects: [Effect] = []
        update(id) { request in
            request.status = .failed(reason)
            if request.isTraced {
                request.isTraced = false
                effects.append(.trace(id, .end(failure: "not published")))
            }
        }
        return effects
    }

    /// Notes an answer or outcome correlated with one of the requests. An accepted answer
    /// that comes after an outcome (events of two modules may arrive in either order) does
    /// not replace it. For a traced request, the event is a hop back at the sender, and the
    /// last one (a failure, an outcome, or the answer when the command has no outcome) ends
    /// its trace: those are the effects returned.
    mutating func apply(_ event: StoredEvent) -> [Effect] {
        var effects: [Effect] = []
        update(event.correlation) { request in
            guard let id = request.id, let classifier = request.classifier,
                let verdict = classifier.verdict(of: event, answering: id)
            else { return }
            let short = event.type.split(separator: ".").last.map(String.init) ?? event.type
            switch verdict {
            case .rejected: request.status = .rejected(Self.reason(of: event))
            case .outcome(succeeded: false): request.status = .outcome(succeeded: false, Self.reason(of: event))
            case .outcome(succeeded: true): request.status = .outcome(succeeded: true, short)
            case .accepted where request.status == .pending: request.status = .accepted(short)
            case .accepted: break
            }
            guard request.isTraced else { return }
            effects.append(.trace(id, .receive(event)))
            guard !verdict.isAnswer || classifier.outcomeTypes.isEmpty || verdict.isFailure else { return }
            request.isTraced = false
            effects.append(.trace(id, .end(failure: verdict.isFailure ? "answered with \(event.type)" : nil)))
        }
        return effects
    }

    private mutating func update(_ id: EventID, _ change: (inout TrackedRequest) -> Void) {
        guard let index = requests.lastIndex(where: { $0.id == id }) else { return }
        change(&requests[index])
    }

    private mutating func append(_ request: TrackedRequest) {
        requests.append(request)
        // Pending requests are kept however many there are, so a late answer still finds its request.
        while requests.count > Self.limit, let index = requests.firstIndex(where: { $0.status != .pending }) {
            requests.remove(at: index)
        }
    }

    /// A rejection's or failure's reason: its `message` (or `reason`) field, else its whole payload.
    static func reason(of event: StoredEvent) -> String {
        guard let json = event.payloadJSON,
            let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        else { return event.summary }
        for key in ["message", "reason"] {
            if let text = object[key] as? String, !text.isEmpty { return text }
        }
        return json
    }
}
