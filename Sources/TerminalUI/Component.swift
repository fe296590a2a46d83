/// Something that draws itself into a rectangle of a cell buffer; screens are trees of these.
///
/// Drawing must depend only on the component's own values, so that the same values always
/// give the same cells (which is what snapshot tests compare).
public protocol Component {
    func draw(in buffer: inout CellBuffer, area: Rect)
}

extension Component {
    /// The component drawn alone into a buffer of the given size.
    public func rendered(width: Int, height: Int) -> CellBuffer {
        var buffer = CellBuffer(width: width, height: height)
        draw(in: &buffer, area: buffer.bounds)
        return buffer
    }
}
