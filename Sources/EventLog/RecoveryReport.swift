/// What opening a log found and repaired.
public struct RecoveryReport: Sendable, Equatable, CustomStringConvertible {
    /// The last valid position.
    public var head: UInt64
    /// The newest segment, whose tail was checked.
    public var newestSegment: String
    /// Bytes of the newest segment that were checked, from the last trusted index entry to the end.
    public var scannedBytes: Int64
    /// The segment whose tail was cut, if any.
    public var truncatedSegment: String?
    /// The byte offset the segment was cut at.
    public var truncatedAt: Int64 = 0
    /// Bytes removed from the tail.
    public var droppedBytes: Int64 = 0
    /// Why the tail was not valid, e.g. "checksum mismatch" or "incomplete record".
    public var reason: String?
    /// Whether HEAD was missing or stale, so that the directory had to be listed.
    public var listedDirectory = false

    public var description: String {
        var text = "log head at position \(head); checked the last \(scannedBytes) bytes of \(newestSegment)"
        if let truncatedSegment {
            text +=
                "; cut \(truncatedSegment) at byte \(truncatedAt): dropped \(droppedBytes) byte(s) "
                + "(\(reason ?? "invalid tail")): position \(head + 1) and any after it"
        }
        if listedDirectory {
            text += "; HEAD was missing or stale, so the directory was listed and HEAD rewritten"
        }
        return text
    }
}
