import BureauSchemas
import Foundation
import Money
import Runtime

/// Rate alerts: a threshold on a pair's cross rate, above or below.
///
/// An alert is checked at every fixing published after it was set: it triggers once when the
/// rate (the six-significant-digit quote) is at or beyond the threshold, and re-arms when a
/// later fixing is back on the other side, ready for the next crossing.
public struct AlertsReducer: Reducer {
    public struct State: Codable, Equatable, Sendable {
        public var rates: ReferenceRates?
        public var alerts: [String: Alert] = [:]

        public init() {}
    }

    public struct Alert: Codable, Equatable, Sendable {
        public var id: String
        /// The position of the request, which orders alerts.
        public var position: UInt64
        public var base: String
        public var quote: String
        public var above: Bool
        public var threshold: String
        public var triggered = false
    }

    public enum Input: Sendable {
        case setRequested(AlertSetRequested)
        case clearRequested(AlertClearRequested)
        case ratesPublished(Bureau_Rates_RatesPublished)
    }

    public init() {}

    public var module: String { "alerts" }
    public var stateVersion: Int { 1 }
    public var initialState: State { State() }

    public var inputs: InputDecoder<Input> { Self.inputDecoder }

    /// Built once: a host decodes every event with it.
    private static let inputDecoder: InputDecoder<Input> = {
        InputDecoder()
            .on(AlertSetRequested.self, Input.setRequested)
            .on(AlertClearRequested.self, Input.clearRequested)
            .on(Bureau_Rates_RatesPublished.self, Input.ratesPublished)
    }()

    public var outputTypes: [String] { Self.outputs }

    private static let outputs: [String] = {
        [
            AlertArmed.protoMessageName, AlertRejected.protoMessageName, AlertTriggered.protoMessageName,
            AlertRearmed.protoMessageName, AlertCleared.protoMessageName,
        ]
    }()

    public func reduce(state: inout State, input: Envelope<Input>) -> [Emitted] {
        switch input.payload {
        case .setRequested(let request):
            switch decide(request, at: input.position, in: state) {
            case .reject(let rejection):
                return [Emitted(rejection)]
            case .arm(let alert):
                state.alerts[alert.id] = alert
                var armed = AlertArmed()
                armed.alertID = alert.id
                armed.base = alert.base
                armed.quote = alert.quote
                armed.direction = alert.above ? .above : .below
                armed.threshold = alert.threshold
                return [Emitted(armed)]
            }

        case .clearRequested(let request):
            let id = request.alertID.uppercased()
            guard state.alerts.removeValue(forKey: id) != nil else {
                var rejected = AlertRejected()
                rejected.alertID = request.alertID
                rejected.reason = .notFound
                rejected.message = "no alert has the id \(request.alertID)"
                return [Emitted(rejected)]
            }
            return [Emitted(AlertCleared(alertID: id))]

        case .ratesPublished(let published):
            let rates = ReferenceRates(published)
            state.rates = rates
            var outputs: [Emitted] = []
            for alert in state.alerts.values.sorted(by: { $0.position < $1.position }) {
                let base: Currency
                let quote: Currency
                let threshold: Decimal
                switch Self.kept(alert) {
                case .usable(let pair, let number): (base, quote, threshold) = (pair.base, pair.quote, number)
                case .cannotFire(let cannotFire):
                    // Written by this reducer from a parsed request; one that does not parse (a
                    // state from elsewhere) is said at every fixing, never left to not fire.
                    outputs.append(Emitted(cannotFire))
                    continue
                }
                // A currency this fixing does not quote: nothing to compare until one does.
                guard let rate = rates.quote(from: base, to: quote) else { continue }
                let beyond = alert.above ? rate >= threshold : rate <= threshold
                if beyond && !alert.triggered {
                    state.alerts[alert.id]?.triggered = true
                    var triggered = AlertTriggered()
                    triggered.alertID = alert.id
                    triggered.base = alert.base
                    triggered.quote = alert.quote
                    triggered.direction = alert.above ? .above : .below
                    triggered.threshold = alert.threshold
                    triggered.rate = DecimalText.plain(rate)
                    triggered.asOf = rates.asOf
                    outputs.append(Emitted(triggered))
                } else if !beyond && alert.triggered {
                    state.alerts[alert.id]?.triggered = false
                    var rearmed = AlertRearmed()
                    rearmed.alertID = alert.id
                    rearmed.rate = DecimalText.plain(rate)
                    rearmed.asOf = rates.asOf
                    outputs.append(Emitted(rearmed))
                }
            }
            return outputs
        }
    }

    /// An alert kept in the state, read back.
    private enum Kept {
        /// Its pair and threshold.
        case usable((base: Currency, quote: Currency), threshold: Decimal)
        /// The rejection that says why it cannot fire.
        case cannotFire(AlertRejected)
    }

    private static func kept(_ alert: Alert) -> Kept {
        func cannotFire(_ reason: AlertRejected.Reason, _ message: String) -> AlertRejected {
            var rejection = AlertRejected()
            rejection.alertID = alert.id
            rejection.base = alert.base
            rejection.quote = alert.quote
            rejection.threshold = alert.threshold
            rejection.reason = reason
            rejection.message = message + ": the alert cannot fire; clear it and set it again"
            return rejection
        }
        guard let base = Currency(alert.base), let quote = Currency(alert.quote) else {
            return .cannotFire(
                cannotFire(.unknownPair, "the pair kept for \(alert.id), '\(alert.base)/\(alert.quote)', is not one"))
        }
        guard let threshold = try? DecimalText.parse(alert.threshold).value else {
            return .cannotFire(
                cannotFire(.badThreshold, "the threshold kept for \(alert.id), '\(alert.threshold)', is not a number"))
        }
        return .usable((base, quote), threshold: threshold)
    }

    private enum Decision {
        case arm(Alert)
        case reject(AlertRejected)
    }

    private func decide(_ request: AlertSetRequested, at position: UInt64, in state: State) -> Decision {
        func rejected(_ reason: AlertRejected.Reason, _ message: String) -> Decision {
            var rejection = AlertRejected()
            rejection.base = request.base
            rejection.quote = request.quote
            rejection.threshold = request.threshold
            rejection.reason = reason
            rejection.message = message
            return .reject(rejection)
        }
        let pair = "\(request.base.uppercased())/\(request.quote.uppercased())"
        guard let rates = state.rates else { return rejected(.unknownPair, "no rates have been published yet") }
        guard let base = Currency(request.base), let quote = Currency(request.quote),
            rates.currencies.contains(base), rates.currencies.contains(quote)
        else { return rejected(.unknownPair, "\(pair) is not in the rates of \(rates.asOf)") }
        guard base != quote else { return rejected(.unknownPair, "\(pair): base and quote are the same currency") }
        guard request.direction == .above || request.direction == .below else {
            return rejected(.badThreshold, "say whether the alert is for a rate above or below the threshold")
        }
        guard let threshold = try? DecimalText.parse(request.threshold).value, threshold > 0 else {
            return rejected(.badThreshold, "the threshold '\(request.threshold)' is not a positive decimal")
        }
        return .arm(
            Alert(
                id: "A\(position)", position: position, base: base.code, quote: quote.code,
                above: request.direction == .above, threshold: DecimalText.plain(threshold)))
    }
}
