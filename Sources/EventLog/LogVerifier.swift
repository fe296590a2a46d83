#if canImport(Glibc)
    import Glibc
#endif

/// Checks every record of a log directory: framing, checksum, and positions without holes.
public enum LogVerifier {
    public struct Report: Sendable, Equatable {
        public var records: UInt64 = 0
        public var segments = 0
        public var bytes: Int64 = 0
        /// The first problem found, if any: position, segment, byte offset and reason.
        public var problem: Problem?
        /// The newest segment ends in a record being written (only when a writer holds the log).
        public var writeInProgress = false

        public var ok: Bool { problem == nil }
    }

    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        public var position: UInt64
        public var segment: String
        public var offset: Int64
        public var reason: String
        public var description: String {
            "position \(position) at byte offset \(offset) of \(segment): \(reason)"
        }
    }

    /// Reads the whole log in `directory`. An incomplete last record is accepted only while a
    /// writer holds the log (it is being written); otherwise it is the problem reported.
    public static func verify(directory: String, progress: (UInt64) -> Void = { _ in }) throws -> Report {
        var report = Report()
        let segments = try SegmentFile.list(in: directory)
        report.segments = segments.count
        for segment in segments {
            report.bytes += (try? PosixFile(path: segment.path, flags: O_RDONLY).size) ?? 0
        }
        let writerActive = DirectoryLock.isHeld(directory)
        let cursor = try LogCursor(directory: directory, after: 0)
        do {
            while let record = try cursor.next() {
                report.records += 1
                if record.position % 65_536 == 0 { progress(record.position) }
            }
        } catch let EventLogError.corruptRecord(segment, offset, position, reason) {
            report.problem = Problem(position: position, segment: segment, offset: offset, reason: reason)
            return report
        } catch let EventLogError.missingPositions(after, segment, startsAt) {
            report.problem = Problem(
                position: after + 1, segment: segment, offset: 0,
                reason: "positions \(after + 1)…\(startsAt - 1) are missing before this segment")
            return report
        } catch let EventLogError.badSegmentHeader(segment, reason) {
            report.problem = Problem(position: cursor.nextPosition, segment: segment, offset: 0, reason: reason)
            return report
        }
        switch cursor.end {
        case .clean:
            break
        case .partial(let segment, let offset):
            if writerActive {
                report.writeInProgress = true
            } else {
                report.problem = Problem(
                    position: cursor.nextPosition, segment: segment, offset: offset,
                    reason: "incomplete record at the end of the log (start the bus to recover it)")
            }
        case .invalid(let segment, let offset, let reason):
            if writerActive {
                report.writeInProgress = true
            } else {
                report.problem = Problem(
                    position: cursor.nextPosition, segment: segment, offset: offset,
                    reason: "\(reason) (start the bus to recover the log)")
            }
        }
        return report
    }
}
