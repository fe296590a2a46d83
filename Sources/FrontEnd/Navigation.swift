import Money

/// Where the person is: which screen, what is selected on each, and what is open on top.
///
/// Only the coordinator changes it; screens read it.
public struct Navigation: Sendable, Equatable {
    public enum Tab: Int, Sendable, CaseIterable {
        case watchlist, reservations, alerts

        public var title: String {
            switch self {
            case .watchlist: "Watchlist"
            case .reservations: "Reservations"
            case .alerts: "Alerts"
            }
        }
    }

    /// Who opened the pair picker, and so what the picked pair is for.
    public enum PickerPurpose: Sendable, Equatable {
        case watch
        case alert
    }

    /// What a one-line prompt asks for.
    public enum PromptPurpose: Sendable, Equatable {
        /// The converter's amount: "250" or "250 USD".
        case amount
        /// An amount of the pair's base to reserve at `rate`, the quote shown.
        case reserve(CurrencyPair, rate: String)
        /// A threshold: ">1.2" or "<1.0".
        case alert(CurrencyPair)
    }

    public enum Overlay: Sendable, Equatable {
        case picker(PairPicker, PickerPurpose)
        case prompt(PromptPurpose, TextField)
        case commandLine(TextField, completions: [String])
        case help
    }

    public var tab: Tab = .watchlist
    public var selection: [Tab: Int] = [:]
    public var overlay: Overlay?
    /// A one-off message for the person (why a key did nothing), cleared by the next key.
    public var notice: String?

    public init() {}

    public func selected(_ tab: Tab) -> Int { selection[tab] ?? 0 }
}
