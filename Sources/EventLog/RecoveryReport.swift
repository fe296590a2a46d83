/// What opening a log found and repaired.
public struct RecoveryReport: Sendable, Equatable, CustomStringConvertible {
    /// The last valid position.
    public var head: UInt64
    /// The newest segment, which was checked whole.
    public var newestSegment: String
    /// Bytes of the newest segment that were checked.
    public var scannedBytes: Int64
    /// The last position the log had acknowledged before it was opened (its recovery point).
    public var acknowledged: UInt64 = 0
    /// The segment whose tail was cut, if any.
    public var truncatedSegment: String?
    /// The byte offset the segment was cut at.
    public var truncatedAt: Int64 = 0
    /// Bytes removed from the tail: a write that was never acknowledged.
    public var droppedBytes: Int64 = 0
    /// Why the tail was not valid, e.g. "checksum mismatch" or "incomplete record".
    public var reason: String?
    /// Whether the recovery point was missing or unreadable, so that the directory had to be
    /// listed to find the newest segment; the reason, if so.
    public var listedDirectory = false
    public var recoveryPointProblem: String?
    /// Whether the newest segment's index did not match it and was rebuilt.
    public var rebuiltIndex = false
    /// Why the newest segment is not indexed, if its index could not be rebuilt: readers scan
    /// it, and the writer adds no entries to it.
    public var indexProblem: String?

    public var description: String {
        var text =
            "log head at position \(head) (acknowledged through \(acknowledged)); checked \(scannedBytes) bytes of "
            + newestSegment
        if let truncatedSegment {
            text +=
                "; cut \(truncatedSegment) at byte \(truncatedAt): dropped \(droppedBytes) byte(s) of a write that was "
                + "never acknowledged (\(reason ?? "invalid tail")), beyond position \(head)"
        }
        if listedDirectory {
            text += "; the recovery point was \(recoveryPointProblem ?? "missing"), so the directory was listed"
        }
        if let indexProblem {
            text += "; stopped indexing the newest segment: " + indexProblem
        } else if rebuiltIndex {
            text += "; the newest segment's index did not match it and was rebuilt"
        }
        return text
    }
}
