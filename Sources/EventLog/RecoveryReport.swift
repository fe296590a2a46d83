/// What opening a log found and repaired.
public struct RecoveryReport: Sendable, Equatable, CustomStringConvertible {
    /// The last valid position.
    public var head: UInt64
    public var segmentCount: Int
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
    /// A segment file removed because it held no complete header (a crash while creating it).
    public var removedEmptySegment: String?

    public var description: String {
        var text = "log head at position \(head) in \(segmentCount) segment(s); checked the last \(scannedBytes) bytes"
        if let truncatedSegment {
            text +=
                "; cut \(truncatedSegment) at byte \(truncatedAt): dropped \(droppedBytes) byte(s) "
                + "(\(reason ?? "invalid tail")): position \(head + 1) and any after it"
        }
        if let removedEmptySegment {
            text += "; removed \(removedEmptySegment), which had no complete header"
        }
        return text
    }
}
