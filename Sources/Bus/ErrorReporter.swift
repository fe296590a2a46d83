import BureauSchemas
import EventLog
import Logging

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The exception manager: every error a process meets becomes an `ErrorRaised` event that
/// anyone can subscribe to (the front-end's status line, `bureau show errors`, a test).
///
/// The one place such an event is built — module, process, a stable machine-readable code, a
/// message cut to what an event can always carry, the position it concerns — for adapters,
/// reducer hosts, the supervisor and the bus daemon.
public struct ErrorReporter: Sendable {
    /// The module that raises, e.g. "rates-adapter", "bus".
    public let module: String
    /// The process it runs in; empty where the event must not depend on it (a reducer's
    /// output, which replay computes again).
    public let process: String

    public init(module: String, process: String) {
        self.module = module
        self.process = process
    }

    /// The `ErrorRaised` event, to publish (alone, or with the events it goes with).
    ///
    /// - Parameters:
    ///   - code: stable and machine-readable (``ErrorCode``).
    ///   - causation: the position of the event being handled when the error happened; 0 for none.
    ///   - id: a derived id for an error a reducer computes (so that it is published once); random otherwise.
    public func event(
        code: ErrorCode, message: String, causation: UInt64 = 0, id: EventID = .random(), correlation: EventID? = nil
    ) -> OutgoingEvent {
        var raised = Bureau_System_ErrorRaised()
        raised.module = module
        raised.process = process
        raised.code = code.rawValue
        raised.message = EventText.bounded(message)
        raised.causation = causation
        // A proto3 message of strings does not fail to encode; an empty payload would still read
        // as an ErrorRaised (with its fields empty), never as another type.
        return OutgoingEvent(
            id: id, type: Bureau_System_ErrorRaised.protoMessageName, payload: (try? raised.serializedData()) ?? Data(),
            module: module, causation: causation, correlation: correlation)
    }

    /// Publishes the event on `bus`. Never throws: a report that cannot be published is logged,
    /// so that reporting one problem does not become another.
    public func report(
        code: ErrorCode, message: String, causation: UInt64 = 0, on bus: any EventBus, logger: Logger
    ) async {
        do {
            if case .rejected(let reason) = try await bus.publish(
                event(code: code, message: message, causation: causation))
            {
                logger.error(
                    "the bus refused an error report",
                    metadata: ["error.code": "\(code)", "error.refusal": "\(reason)"])
            }
        } catch {
            logger.error(
                "could not publish an error report", metadata: ["error.code": "\(code)", "error.reason": "\(error)"])
        }
    }
}
