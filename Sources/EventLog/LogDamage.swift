#if canImport(Glibc)
    import Glibc
#endif

/// Damage in the log: where it is, which positions it holds, and why it is not a torn write.
public struct LogDamage: Sendable, Equatable, CustomStringConvertible {
    /// The segment file's path.
    public var segment: String
    /// Where the damage starts in it.
    public var offset: Int64
    /// The first position that cannot be read.
    public var firstPosition: UInt64
    /// The last position lost, when it is known (from the next valid record, or from the
    /// recovery point).
    public var lastPosition: UInt64?
    /// What is wrong with the bytes.
    public var reason: String
    /// Why it was not cut as a torn write.
    public var notCut: String

    public init(
        segment: String, offset: Int64, firstPosition: UInt64, lastPosition: UInt64?, reason: String, notCut: String
    ) {
        self.segment = segment
        self.offset = offset
        self.firstPosition = firstPosition
        self.lastPosition = lastPosition
        self.reason = reason
        self.notCut = notCut
    }

    public var positions: String {
        guard let lastPosition, lastPosition > firstPosition else { return "position \(firstPosition)" }
        return "positions \(firstPosition)…\(lastPosition)"
    }

    public var description: String {
        "the log is damaged at byte \(offset) of \(segment): \(positions) (\(reason)); \(notCut), so it is "
            + "left as it is: a repair moves the damaged bytes aside and marks the positions as lost"
    }
}
