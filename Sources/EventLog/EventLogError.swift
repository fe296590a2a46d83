#if canImport(Glibc)
    import Glibc
#endif

/// What went wrong with the event log, and where.
public enum EventLogError: Error, CustomStringConvertible, Equatable {
    /// Another process holds the log's lock.
    case locked(directory: String, pid: Int32?, command: String?)
    /// A system call failed on a file of the log.
    case io(operation: String, path: String, errno: Int32)
    /// A record failed its checksum or framing, at a byte offset of a segment.
    case corruptRecord(segment: String, offset: Int64, position: UInt64, reason: String)
    /// A segment file's header is not a valid one of the format version it names (damaged, or
    /// not a segment at all).
    case badSegmentHeader(segment: String, reason: String)
    /// A segment of a log format version this build does not read: a later Bureau wrote it.
    case unsupportedFormat(segment: String, version: UInt32)
    /// Segments do not continue one another (a file is missing or misnamed).
    case missingPositions(after: UInt64, segment: String, startsAt: UInt64)
    /// An append did not continue the log's positions.
    case positionOutOfOrder(expected: UInt64, got: UInt64)
    /// A record is larger than the log accepts.
    case recordTooLarge(bytes: Int, limit: Int)
    /// A durability policy that could not be parsed.
    case badDurability(String)
    /// Opening found damage the log must not cut by itself: records it acknowledged, or bytes
    /// that are not a torn write. Nothing was changed; a repair moves the damage aside.
    case damaged(LogDamage)
    /// The disk (or the quota) is full: nothing of the batch was stored, and the log is as it
    /// was. Appends may be tried again once there is space.
    case diskFull(path: String)
    /// A write or sync failed in a way that leaves the log's state on disk unknown. The log
    /// refuses everything after it; reopening recovers from what is durable.
    case failed(String)

    public var description: String {
        switch self {
        case .locked(let directory, let pid, let command):
            let holder =
                switch (pid, command) {
                case (let pid?, let command?): "process \(pid) (\(command))"
                case (let pid?, nil): "process \(pid)"
                default: "another process"
                }
            return "the event log in \(directory) is in use by \(holder); stop it, or use another data directory"
        case .io(let operation, let path, let code):
            return "\(operation) \(path): \(String(cString: strerror(code))) (errno \(code))"
        case .corruptRecord(let segment, let offset, let position, let reason):
            return "corrupt record at position \(position), byte offset \(offset) of \(segment): \(reason)"
        case .badSegmentHeader(let segment, let reason):
            return "\(segment) is not a Bureau log segment: \(reason)"
        case .unsupportedFormat(let segment, let version):
            return
                "\(segment) is in log format version \(version); this Bureau reads version \(SegmentFile.formatVersion): "
                + "a later Bureau wrote it, and only a Bureau that reads version \(version) can open it (nothing was changed)"
        case .missingPositions(let after, let segment, let startsAt):
            return "positions are missing after \(after): the next segment \(segment) starts at \(startsAt)"
        case .positionOutOfOrder(let expected, let got):
            return "append out of order: expected position \(expected), got \(got)"
        case .recordTooLarge(let bytes, let limit):
            return "record of \(bytes) bytes is over the limit of \(limit) bytes"
        case .badDurability(let text):
            return "unknown durability policy '\(text)': use always, interval=<milliseconds> or never"
        case .damaged(let damage):
            return damage.description
        case .diskFull(let path):
            return "the disk is full (writing \(path)): nothing of the batch was stored; free some space and retry"
        case .failed(let reason):
            return "the log stopped after a failed write or sync, and must be reopened: \(reason)"
        }
    }

    /// Whether the log refused an append and is as it was: the caller may go on.
    public var isRefusal: Bool {
        if case .diskFull = self { return true }
        return false
    }
}
