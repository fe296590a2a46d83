import ConverterFeature
import Foundation
import Money
import TerminalUI

/// A one-line prompt in a box, with what the answer will mean (a reservation shows its quote).
public struct PromptView: Component, Sendable {
    public var purpose: Navigation.PromptPurpose
    public var field: TextField
    /// The converter's current amount, for the amount prompt's hint.
    public var amount: Money

    public init(purpose: Navigation.PromptPurpose, field: TextField, amount: Money) {
        self.purpose = purpose
        self.field = field
        self.amount = amount
    }

    public func draw(in buffer: inout CellBuffer, area: Rect) {
        let box = area.centered(width: 60, height: 6)
        buffer.fill(box)
        let (title, question, hint) = texts
        buffer.box(box, title: title, footer: "Enter send · Esc cancel", style: Theme.overlay)
        let inner = box.inset(by: 1)
        buffer.write(" " + question, x: inner.x, y: inner.y, clip: inner)
        buffer.write(" > \(field.text)▏", x: inner.x, y: inner.y + 1, style: .bold, clip: inner)
        buffer.write(" " + hint, x: inner.x, y: inner.y + 3, style: Theme.muted, clip: inner)
    }

    private var texts: (String, String, String) {
        switch purpose {
        case .amount:
            return ("Converter amount", "Amount to convert (now \(amount)):", "e.g. 250 or 250.50 USD")
        case .reserve(let pair, let rate):
            let quote: String
            if let value = try? DecimalText.parse(field.text).value, let rateValue = try? DecimalText.parse(rate).value
            {
                quote = "you receive \(Money(rounding: value * rateValue, currency: pair.quote))"
            } else {
                quote = "type an amount of \(pair.base.code)"
            }
            return (
                "Reserve \(pair)",
                "Quote: 1 \(pair.base.code) = \(rate) \(pair.quote.code). Amount in \(pair.base.code):", quote
            )
        case .alert(let pair):
            return ("Alert on \(pair)", "Threshold for \(pair):", ">1.2 triggers at or above, <1.0 at or below")
        }
    }
}
