#if canImport(Glibc)
    import Glibc
#endif

/// How much room a log's files take: its segments and the bytes they hold (indexes and the
/// recovery point left out). Read from the directory, so any thread may ask while the writer
/// writes; what the bus reports as its log's size.
public struct LogFootprint: Sendable, Equatable {
    public var segments: Int
    public var bytes: Int64

    public init(segments: Int, bytes: Int64) {
        self.segments = segments
        self.bytes = bytes
    }

    /// The footprint of the log in `directory`: a listing and a `stat` per segment, so it costs
    /// nothing on the writer's path. A segment gone between the two (a repair) is left out.
    public static func measure(directory: String) throws -> LogFootprint {
        let segments = try SegmentFile.list(in: directory, fileSystem: PosixFileSystem())
        var bytes: Int64 = 0
        for segment in segments {
            var info = stat()
            if stat(segment.path, &info) == 0 { bytes += Int64(info.st_size) }
        }
        return LogFootprint(segments: segments.count, bytes: bytes)
    }
}
