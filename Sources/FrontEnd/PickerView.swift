import Money
import TerminalUI

/// The pair picker in a box: the step, the filter, and the matching currencies.
public struct PickerView: Component, Sendable {
    public var picker: PairPicker
    public var purpose: Navigation.PickerPurpose

    public init(picker: PairPicker, purpose: Navigation.PickerPurpose) {
        self.picker = picker
        self.purpose = purpose
    }

    public func draw(in buffer: inout CellBuffer, area: Rect) {
        let box = area.centered(width: 44, height: min(18, max(8, picker.options.count + 5)))
        buffer.fill(box)
        let action = purpose == .watch ? "Watch a pair" : "Alert on a pair"
        let title: String
        switch picker.step {
        case .base: title = "\(action): base currency"
        case .quote(let base): title = "\(action): \(base.code)/… quote currency"
        }
        buffer.box(box, title: title, footer: "↑↓ Enter pick · Esc cancel", style: Theme.overlay)
        let inner = box.inset(by: 1)
        buffer.write(" Filter: \(picker.filter)▏", x: inner.x, y: inner.y, style: .bold, clip: inner)
        if let notice = picker.notice {
            buffer.write(" ! \(notice)", x: inner.x, y: inner.y + 1, style: Theme.error, clip: inner)
        }
        let list = Rect(x: inner.x, y: inner.y + 2, width: inner.width, height: inner.height - 2)
        let options = picker.options
        guard !options.isEmpty else {
            buffer.write(" no currency matches", x: list.x, y: list.y, style: .dim, clip: list)
            return
        }
        let first = max(0, min(picker.highlighted - list.height + 1, options.count - list.height))
        for (offset, option) in options.dropFirst(first).prefix(list.height).enumerated() {
            let index = first + offset
            let y = list.y + offset
            let label: String
            switch picker.step {
            case .base: label = option.currency.code
            case .quote(let base): label = "\(base.code)/\(option.currency.code)"
            }
            var style: Style = option.isWatched ? .dim : .plain
            var text = "  " + label + (option.isWatched ? "  ✓ watched" : "")
            if index == picker.highlighted {
                style.reverse = true
                text = "› " + text.dropFirst(2)
            }
            buffer.write(DisplayWidth.fit(text, to: list.width), x: list.x, y: y, style: style, clip: list)
        }
    }
}
