import BureauSchemas
import Money
import Runtime

/// The converter: the amount a person converts across the watchlist.
///
/// An amount is a decimal greater than zero, at most 1,000,000,000, with no more decimals
/// than its currency's minor units (ISO 4217: JPY 0, EUR 2, KWD 3).
public struct ConverterReducer: Reducer {
    public struct State: Codable, Equatable, Sendable {
        public var amount: Money?

        public init() {}
    }

    public enum Input: Sendable {
        case amountSetRequested(AmountSetRequested)
    }

    public init() {}

    public var module: String { "converter" }
    public var stateVersion: Int { 1 }
    public var initialState: State { State() }

    public var inputs: InputDecoder<Input> { Self.inputDecoder }

    /// Built once: a host decodes every event with it.
    private static let inputDecoder = InputDecoder<Input>().on(AmountSetRequested.self, Input.amountSetRequested)

    public var outputTypes: [String] { Self.outputs }

    private static let outputs = [AmountChanged.protoMessageName, AmountRejected.protoMessageName]

    public func reduce(state: inout State, input: Envelope<Input>) -> [Emitted] {
        switch input.payload {
        case .amountSetRequested(let request):
            guard let currency = Currency(request.currency) else {
                return [
                    Emitted(
                        AmountRejected(
                            value: request.value, currency: request.currency, reason: .unknownCurrency,
                            message: "'\(request.currency)' is not a currency Bureau knows"))
                ]
            }
            do {
                let amount = try Money(parsing: request.value, currency: currency)
                state.amount = amount
                return [Emitted(AmountChanged(value: amount.text, currency: currency.code))]
            } catch {
                let reason: AmountRejected.Reason =
                    switch error {
                    case .malformed: .malformed
                    case .notPositive: .notPositive
                    case .tooLarge: .tooLarge
                    case .tooManyDecimals: .tooManyDecimals
                    }
                return [
                    Emitted(
                        AmountRejected(
                            value: request.value, currency: currency.code, reason: reason, message: error.description))
                ]
            }
        }
    }
}
