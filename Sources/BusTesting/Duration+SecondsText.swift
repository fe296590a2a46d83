import Guards

extension Duration {
    /// To a tenth of a second, for reports: `1.5 s`.
    var secondsText: String { "\((inSeconds * 10).rounded() / 10) s" }
}
