import Bus
import Foundation
import Runtime

/// Every alert with its threshold and whether it has triggered.
public struct AlertsProjection: Projection {
    public struct Value: Sendable, Encodable, Equatable {
        public var alerts: [Row] = []
        public init() {}
    }

    public struct Row: Sendable, Encodable, Equatable {
        public var id: String
        public var pair: String
        public var condition: String
        public var triggered: Bool
        public var lastRate: String?
        public var asOf: String?
    }

    public init() {}

    public var name: String { "alerts" }
    public var inputTypes: [String] {
        [
            AlertArmed.protoMessageName, AlertTriggered.protoMessageName, AlertRearmed.protoMessageName,
            AlertCleared.protoMessageName,
        ]
    }
    public var initialValue: Value { Value() }

    public func apply(_ event: StoredEvent, to value: inout Value) throws {
        if let armed = try event.payload(as: AlertArmed.self) {
            value.alerts.append(
                Row(
                    id: armed.alertID, pair: "\(armed.base)/\(armed.quote)",
                    condition: "\(armed.direction == .above ? "≥" : "≤") \(armed.threshold)", triggered: false))
        } else if let triggered = try event.payload(as: AlertTriggered.self),
            let index = value.alerts.firstIndex(where: { $0.id == triggered.alertID })
        {
            value.alerts[index].triggered = true
            value.alerts[index].lastRate = triggered.rate
            value.alerts[index].asOf = triggered.asOf
        } else if let rearmed = try event.payload(as: AlertRearmed.self),
            let index = value.alerts.firstIndex(where: { $0.id == rearmed.alertID })
        {
            value.alerts[index].triggered = false
            value.alerts[index].lastRate = rearmed.rate
            value.alerts[index].asOf = rearmed.asOf
        } else if let cleared = try event.payload(as: AlertCleared.self) {
            value.alerts.removeAll { $0.id == cleared.alertID }
        }
    }

    public func render(_ value: Value) -> String {
        guard !value.alerts.isEmpty else { return "No alerts." }
        return value.alerts.map { row in
            "\(Self.shown(row.id))  \(Self.shown(row.pair))  \(Self.shown(row.condition))  "
                + (row.triggered
                    ? "TRIGGERED at \(Self.shown(row.lastRate ?? "?")) (\(Self.shown(row.asOf ?? "")))" : "armed")
        }.joined(separator: "\n")
    }
}
