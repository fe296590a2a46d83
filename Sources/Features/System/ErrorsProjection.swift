import BureauSchemas
import Bus
import Foundation
import Guards
import Runtime

/// The errors any process raised, newest first; also the rates source's failures.
public struct ErrorsProjection: Projection {
    public struct Value: Sendable, Encodable, Equatable {
        public var errors: [Row] = []
        public init() {}
    }

    public struct Row: Sendable, Encodable, Equatable {
        public var position: UInt64
        public var time: String
        public var module: String
        public var code: String
        public var message: String
    }

    /// How many errors are kept.
    public let limit: Int

    public init(limit: Int = 200) {
        self.limit = limit
    }

    public var name: String { "errors" }
    public var inputTypes: [String] { [ErrorRaised.protoMessageName, Bureau_Rates_RatesFetchFailed.protoMessageName] }
    public var initialValue: Value { Value() }

    public func apply(_ event: StoredEvent, to value: inout Value) throws {
        var row: Row?
        if let raised = try event.payload(as: ErrorRaised.self) {
            row = Row(
                position: event.position, time: "\(event.commitTime)", module: raised.module, code: raised.code,
                message: raised.message)
        } else if let failed = try event.payload(as: Bureau_Rates_RatesFetchFailed.self) {
            row = Row(
                position: event.position, time: "\(event.commitTime)", module: "rates",
                code: ErrorCode.fetchFailed.rawValue,
                message: "\(failed.reason) (attempt \(failed.attempt), next in \(failed.nextRetryMs) ms)")
        }
        guard let row else { return }
        value.errors.insert(row, at: 0)
        if value.errors.count > limit { value.errors.removeLast() }
    }

    public func render(_ value: Value) -> String {
        guard !value.errors.isEmpty else { return "No errors." }
        // What processes said, escaped: one row per error, and no escape sequence for a terminal.
        return value.errors.map {
            "\($0.position) \($0.time) \(Self.shown($0.module)) \(Self.shown($0.code)): " + Self.shown($0.message)
        }
        .joined(separator: "\n")
    }
}
